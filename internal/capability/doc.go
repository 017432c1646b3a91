// Package capability loads, validates, hashes and seals capability files.
//
// A capability is YAML or JSON described by schema/capability.schema.json.
// Loading parses the file keeping every value's line, validates it against
// the published JSON Schema and then semantically (unique ids, declared
// inputs, existing output sources, compiling regular expressions), applies
// defaults, and verifies the content hash of a sealed file. Every problem
// names the file, the line and the field path.
//
// The content hash is "sha256:" and the hex SHA-256 of the RFC 8785
// canonical JSON of the capability with defaults applied and without
// content_hash, so it does not depend on YAML layout, comments or key order.
package capability
