// Package catalogcmd is `cua catalog`: adding, listing, showing, diffing, approving and revoking capability versions in the store. The rules live in internal/catalog.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package catalogcmd
