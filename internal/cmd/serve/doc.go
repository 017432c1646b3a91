// Package servecmd is `cua serve`: the run queue's HTTP API
// (internal/jobs/api) with embedded workers (internal/jobs).
//
// It holds flags, validation and wiring only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package servecmd
