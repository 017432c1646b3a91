// Package receipt owns the control-plane records a run emits for whoever
// schedules it (runtime-connector contract, published as JSON Schemas
// under schema/): the capability profile (what this runtime can do and the
// boundary it keeps), the action plan of one run (allowed and forbidden
// actions, stop condition, validation target), the receipt (what the run
// did, as compact facts, with its effects and an evidence handle) and the
// handoff gate (the exact decision a person must take when a run stops at
// a gate, with its inputs).
//
// It builds records from domain values only. It must never copy raw page
// content, extracted output values, free-text messages, secrets or the
// value of a sensitive input into a record (sensitive inputs appear only
// masked by shape), never read files or the clock, and never decide what
// a run does: it describes what the engine decided.
package receipt
