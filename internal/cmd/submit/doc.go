// Package submitcmd is `cua submit`: putting one run of a catalog
// capability in the run queue (internal/jobs) and, with --wait, printing
// its result.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package submitcmd
