package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Adapters wrap them with the record they concern; callers
// branch with errors.Is.
var (
	// ErrNotFound: no record has that key.
	ErrNotFound = errors.New("not found")
	// ErrExists: a record with that id already exists.
	ErrExists = errors.New("already exists")
	// ErrInvalid: a required field is missing or malformed; the message
	// names the field.
	ErrInvalid = errors.New("invalid")
	// ErrImmutable: id@version is frozen to another content hash.
	ErrImmutable = errors.New("id@version is immutable")
	// ErrHashMismatch: an approval names a content hash other than its
	// version's.
	ErrHashMismatch = errors.New("content hash does not match the version")
	// ErrApprovalConsumed: a one-off approval was already used by a run.
	ErrApprovalConsumed = errors.New("approval already consumed")
	// ErrApprovalRevoked: the approval was revoked.
	ErrApprovalRevoked = errors.New("approval revoked")
	// ErrApprovalExpired: the approval expired.
	ErrApprovalExpired = errors.New("approval expired")
	// ErrNotOneOff: only a one-off approval can be consumed.
	ErrNotOneOff = errors.New("approval is not one-off")
	// ErrIdempotencyKeyClaimed: another run already claimed the key.
	ErrIdempotencyKeyClaimed = errors.New("idempotency key already claimed")
	// ErrLeaseHeld: another holder's lease has not expired.
	ErrLeaseHeld = errors.New("lease held by another holder")
	// ErrLeaseLost: the caller's holder or epoch is no longer current.
	ErrLeaseLost = errors.New("lease lost")
	// ErrAlreadyClaimed: the intervention is not open any more.
	ErrAlreadyClaimed = errors.New("intervention already claimed")
	// ErrAlreadyResolved: the intervention was resolved already.
	ErrAlreadyResolved = errors.New("intervention already resolved")
	// ErrKeyMoved: an idempotency key's binding changed since it was read.
	ErrKeyMoved = errors.New("idempotency key binding moved")
)

// VersionConflictError refuses a version whose id@version or content hash is
// already stored with something else. It matches [ErrImmutable].
type VersionConflictError struct {
	// Ref is the id@version being added.
	Ref string
	// Hash is the content hash being added.
	Hash string
	// ExistingRef and ExistingHash are what the store already holds.
	ExistingRef  string
	ExistingHash string
}

func (e *VersionConflictError) Error() string {
	if e.ExistingRef != e.Ref {
		return fmt.Sprintf("%s: content hash %s is already stored as %s", e.Ref, e.Hash, e.ExistingRef)
	}
	return fmt.Sprintf("%s is immutable: stored content hash %s, refused %s", e.Ref, e.ExistingHash, e.Hash)
}

// Is reports whether target is [ErrImmutable].
func (e *VersionConflictError) Is(target error) bool { return target == ErrImmutable }

// IdempotencyError says which run already claimed an idempotency key. It
// matches [ErrIdempotencyKeyClaimed].
type IdempotencyError struct {
	CapabilityID string
	Key          string
	// RunID is the run that claimed the key first.
	RunID string
}

func (e *IdempotencyError) Error() string {
	return fmt.Sprintf("idempotency key %q of %s already claimed by run %s", e.Key, e.CapabilityID, e.RunID)
}

// Is reports whether target is [ErrIdempotencyKeyClaimed].
func (e *IdempotencyError) Is(target error) bool { return target == ErrIdempotencyKeyClaimed }

// invalid returns an ErrInvalid naming the field.
func invalid(what, field string) error {
	return fmt.Errorf("%s: %s is required: %w", what, field, ErrInvalid)
}

// NotFoundError says which record is missing and what shows the ones
// there are, in one line: "memberdesk.x@1.0.0: no such version in the
// catalog (cua catalog list)". It matches [ErrNotFound].
type NotFoundError struct {
	// What names the record as the caller gave it ("memberdesk.x@1.0.0",
	// "approval ap-1").
	What string
	// Reason says what is missing ("no such version in the catalog").
	Reason string
	// Fix is the command that lists what there is, or "".
	Fix string
	// Kind is another sentinel the error matches besides ErrNotFound (a
	// package's own, such as the queue's), or nil.
	Kind error
}

func (e *NotFoundError) Error() string {
	if e.Fix == "" {
		return e.What + ": " + e.Reason
	}
	return fmt.Sprintf("%s: %s (%s)", e.What, e.Reason, e.Fix)
}

// Is reports whether target is [ErrNotFound] or e.Kind.
func (e *NotFoundError) Is(target error) bool {
	return target == ErrNotFound || (e.Kind != nil && target == e.Kind)
}
