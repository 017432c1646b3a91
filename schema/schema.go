// Package schema embeds the JSON Schemas cua publishes (the capability
// format, the run record and the event log; receipts later), so the binary
// validates with exactly the files users see under schema/.
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

// EventLog is schema/event-log.schema.json: one line of a run's
// events.jsonl, with one data shape per event type.
//
//go:embed event-log.schema.json
var EventLog []byte

// EventLogID is the $id of the event log schema.
const EventLogID = "https://cua.dev/schema/event-log.schema.json"
