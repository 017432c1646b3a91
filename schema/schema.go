// Package schema embeds the JSON Schemas cua publishes (the capability
// format, the run record, the event log and the control-plane records:
// capability profile, action plan, receipt, handoff gate), so the binary
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

// CapabilityProfile is schema/capability-profile.schema.json: what this
// runtime can do and the boundary it keeps (internal/receipt).
//
//go:embed capability-profile.schema.json
var CapabilityProfile []byte

// CapabilityProfileID is the $id of the capability profile schema.
const CapabilityProfileID = "https://cua.dev/schema/capability-profile.schema.json"

// ActionPlan is schema/action-plan.schema.json: a run's plan.json.
//
//go:embed action-plan.schema.json
var ActionPlan []byte

// ActionPlanID is the $id of the action plan schema.
const ActionPlanID = "https://cua.dev/schema/action-plan.schema.json"

// Receipt is schema/receipt.schema.json: a run's receipt.json.
//
//go:embed receipt.schema.json
var Receipt []byte

// ReceiptID is the $id of the receipt schema.
const ReceiptID = "https://cua.dev/schema/receipt.schema.json"

// HandoffGate is schema/handoff-gate.schema.json: a run's gate.json when
// it stopped at a gate.
//
//go:embed handoff-gate.schema.json
var HandoffGate []byte

// HandoffGateID is the $id of the handoff gate schema.
const HandoffGateID = "https://cua.dev/schema/handoff-gate.schema.json"
