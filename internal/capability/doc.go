// Package capability loads, validates, hashes and seals capability files.
//
// It owns the capability file format: reading a file (bounded, regular
// files only), YAML/JSON parsing with the line of every value, validation
// against the published JSON Schema (schema/capability.schema.json) and
// then semantically (unique ids, declared inputs, existing output sources,
// compiling regular expressions, the per-action field rules of
// actionRules), defaults, the RFC 8785 canonical JSON and content hash,
// exact semantic versions of references, binding inputs, and writing a
// file's content_hash and pins (Seal, SealPinned). Every problem names the
// file, the line and the field path.
//
// The content hash is "sha256:" and the hex SHA-256 of the RFC 8785
// canonical JSON of the capability with defaults applied and without
// content_hash, so it does not depend on YAML layout, comments or key order.
//
// It must never: run or dispatch anything (it knows no surface, runtime,
// policy or model, and imports only domain and the embedded schemas);
// resolve or see a secret's value (a step names a secret by reference);
// accept a file whose declared hash differs from its content; read an
// unbounded input or block on a device or FIFO; take more than n·log n
// time in a file's size (the benchmarks at the 4 MiB cap are
// BenchmarkParseAtCap here and BenchmarkValidateAtCap in bench); or keep
// running after its context is done (LoadContext and ParseContext return
// ctx.Err() within milliseconds; CanonicalContext and HashContext check
// ctx every 1,024 values). Loaded values are not safe for concurrent
// mutation; the package's functions are safe for concurrent use.
package capability
