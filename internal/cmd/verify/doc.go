// Package verifycmd is `cua verify`: checking a run bundle with internal/evidence and printing the report.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package verifycmd
