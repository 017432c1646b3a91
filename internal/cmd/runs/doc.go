// Package runscmd is `cua runs`: listing and showing runs from the catalog's run index.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package runscmd
