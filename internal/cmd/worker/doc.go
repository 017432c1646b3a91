// Package workercmd is `cua worker`: a process that works the run queue
// (internal/jobs) with its own browsers, on the SQLite queue beside the
// data directory's store or on a fleet's PostgreSQL (--db postgres://…).
//
// It holds flags, validation and wiring only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package workercmd
