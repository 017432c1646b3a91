// Package keyscmd is `cua keys`: creating the deployment's evidence
// signing key (internal/evidence/signkey) and printing its public half.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package keyscmd
