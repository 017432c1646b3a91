// Package democmd is `cua demo`: flags and printing around internal/demo, which owns the stages and their expectations.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package democmd
