// Package capabilitycmd is `cua capability validate|hash|seal`: checking, hashing and sealing capability files. The checks live in internal/capability and internal/pipeline.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package capabilitycmd
