// Package secretscmd is `cua secrets scan`: scanning files for registered secrets and key shapes with internal/secret.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package secretscmd
