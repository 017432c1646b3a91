// Package healcmd is `cua heal`: listing, showing, diffing, evaluating,
// approving, rejecting and rolling back heal proposals (internal/heal).
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package healcmd
