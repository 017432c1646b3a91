// Package schema embeds the JSON Schemas cua publishes (the capability
// format and the run record; receipts later), so the binary validates with
// exactly the files users see under schema/.
package schema

import _ "embed"

// Capability is schema/capability.schema.json (JSON Schema draft 2020-12).
//
//go:embed capability.schema.json
var Capability []byte

// CapabilityID is the $id of the capability schema.
const CapabilityID = "https://cua.dev/schema/capability.schema.json"

// RunRecord is schema/run-record.schema.json: record.json and the output
// of cua replay --json.
//
//go:embed run-record.schema.json
var RunRecord []byte

// RunRecordID is the $id of the run record schema.
const RunRecordID = "https://cua.dev/schema/run-record.schema.json"
