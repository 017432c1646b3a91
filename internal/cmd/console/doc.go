// Package consolecmd is `cua console`: the operator console over the
// store's intervention queue, and the --park flags `cua replay` shares
// (ParkFlags, StartForRun).
//
// It holds flags, validation and wiring only (the store, its queue adapter
// and internal/console); it must never resolve targets, read snapshots or
// dispatch actions itself.
package consolecmd
