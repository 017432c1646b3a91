// Package versioncmd is `cua version`: the build's version, as text or JSON.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package versioncmd
