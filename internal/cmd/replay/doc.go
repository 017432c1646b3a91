// Package replaycmd is `cua replay`: flags, loading the capability and printing the record; the run itself is internal/pipeline and internal/replay.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package replaycmd
