// Package userscmd is `cua users`: adding, listing, disabling and rotating
// the principals (internal/principal) that approve, revoke, resolve and
// sign in to the console and the APIs.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package userscmd
