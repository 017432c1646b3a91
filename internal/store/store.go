// Package store is the persistence port of cua: the records a catalog, a run
// index, a lease broker and a job queue share between processes and machines.
//
// It owns the [Store] interface, the record types it reads and writes
// (capability versions with their sealed bytes, approvals, runs, idempotency
// keys, leases, interventions), the errors adapters return, and the parsing of
// an adapter's embedded migration files. The adapters live beside it:
// store/sqlite (the embedded default, one file under the data directory) and
// store/postgres (a fleet); store/storetest is the conformance suite both run.
//
// It must never hold engine logic: it does not compute content hashes, parse
// capabilities, evaluate approval bounds, decide whether a run may start, or
// read a clock other than the one injected through [Config]. It imports only
// domain from this module, and never an adapter.
package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cuahq/cua/internal/domain"
)

// Store is the persistence port. Every method takes a context first, every
// write is one transaction (all of its rows or none of them), and every
// method is safe for concurrent use by many goroutines and by many processes
// sharing one database.
//
// Times are stored in UTC at microsecond precision; a zero time.Time means
// "not set" (no expiry, not ended, not revoked). Methods that stamp a time
// (created, consumed, revoked, claimed, lease expiry) take it from
// [Config.Now] when the record leaves it zero.
type Store interface {
	// AddVersion stores one capability version and its bytes, and its
	// capability id if this is the first version. id@version is immutable:
	// adding the same id@version with the same content hash is a no-op that
	// returns the stored version and created=false; with a different hash it
	// returns a *[VersionConflictError] (errors.Is [ErrImmutable]) naming
	// both hashes. A hash already stored under another id@version is also a
	// *VersionConflictError. Returns [ErrInvalid] when a field is missing.
	AddVersion(ctx context.Context, v Version) (stored Version, created bool, err error)
	// GetVersion returns id@version with its bytes, or [ErrNotFound].
	GetVersion(ctx context.Context, id, version string) (Version, error)
	// GetVersionByHash returns the version whose content hash is hash, with
	// its bytes, or [ErrNotFound]. Prerequisites and remedies resolve here.
	GetVersionByHash(ctx context.Context, hash string) (Version, error)
	// ListVersions returns the versions matching f, without their bytes,
	// ordered by capability id then creation time then version.
	ListVersions(ctx context.Context, f VersionFilter) ([]Version, error)

	// AddApproval stores a. The version a names must exist ([ErrNotFound])
	// and carry a.ContentHash ([ErrHashMismatch]); an ID already used
	// returns [ErrExists]. A one-off approval (Once) must carry Inputs.
	AddApproval(ctx context.Context, a Approval) (Approval, error)
	// GetApproval returns the approval with that id, or [ErrNotFound].
	GetApproval(ctx context.Context, id string) (Approval, error)
	// ListApprovals returns the approvals matching f, oldest first.
	ListApprovals(ctx context.Context, f ApprovalFilter) ([]Approval, error)
	// RevokeApproval stamps the approval revoked by the principal by and
	// returns it; revoking a revoked approval keeps the first time and the
	// first revoker. [ErrNotFound] if absent, [ErrInvalid] when by is empty.
	RevokeApproval(ctx context.Context, id, by string) (Approval, error)
	// ConsumeApproval marks a one-off approval used by runID, atomically:
	// of any number of concurrent callers exactly one succeeds. Others get
	// [ErrApprovalConsumed] (naming the run that used it); a revoked one
	// [ErrApprovalRevoked], an expired one (at Config.Now) [ErrApprovalExpired],
	// a standing one [ErrNotOneOff], an absent one [ErrNotFound].
	ConsumeApproval(ctx context.Context, id, runID string) (Approval, error)

	// RecordRun stores a new run. When r.IdempotencyKey is set, the key is
	// claimed for r.CapabilityID in the same transaction: if it is already
	// claimed, nothing is written and RecordRun returns the first run and a
	// *[IdempotencyError] (errors.Is [ErrIdempotencyKeyClaimed]). A run id
	// already used returns [ErrExists].
	RecordRun(ctx context.Context, r Run) (Run, error)
	// UpdateRun writes the mutable fields of the run r.ID (status, outcome,
	// failure code, effects, ended time, evidence path, unauthorized
	// dispatches, outputs) and returns the stored run; [ErrNotFound] if absent.
	UpdateRun(ctx context.Context, r Run) (Run, error)
	// GetRun returns the run with that id, or [ErrNotFound].
	GetRun(ctx context.Context, id string) (Run, error)
	// ListRuns returns the runs matching f, newest first.
	ListRuns(ctx context.Context, f RunFilter) ([]Run, error)
	// LookupIdempotencyKey returns the run id that claimed key for the
	// capability id, or [ErrNotFound].
	LookupIdempotencyKey(ctx context.Context, capabilityID, key string) (runID string, err error)
	// CountEvalSuccesses counts eval runs of exactly this content hash that
	// ended SUCCESS with zero unauthorized dispatches.
	CountEvalSuccesses(ctx context.Context, hash string) (int, error)

	// AcquireLease grants the session's lease to req.Holder until Now+TTL.
	// A free or expired lease (or Force, a takeover) moves to the holder at
	// the next epoch; the current unexpired holder renews at the same epoch;
	// another unexpired holder gets [ErrLeaseHeld]. Atomic across processes.
	AcquireLease(ctx context.Context, req LeaseRequest) (Lease, error)
	// RenewLease extends the lease held by holder at epoch to Now+ttl, or
	// returns [ErrLeaseLost] when the holder or epoch is no longer current
	// or the lease has expired.
	RenewLease(ctx context.Context, sessionID, holder string, epoch int64, ttl time.Duration) (Lease, error)
	// ReleaseLease ends the lease held by holder at epoch (the next acquire
	// starts a new epoch); [ErrLeaseLost] when it is no longer theirs.
	ReleaseLease(ctx context.Context, sessionID, holder string, epoch int64) error
	// GetLease returns the session's lease, or [ErrNotFound].
	GetLease(ctx context.Context, sessionID string) (Lease, error)

	// EnqueueIntervention stores an open intervention; [ErrExists] on a
	// used id.
	EnqueueIntervention(ctx context.Context, in Intervention) (Intervention, error)
	// ClaimIntervention moves an open intervention to claimed by claimer,
	// atomically: one of concurrent claimers wins, the others get
	// [ErrAlreadyClaimed]; [ErrNotFound] if absent.
	ClaimIntervention(ctx context.Context, id, claimer string) (Intervention, error)
	// ReleaseIntervention returns an intervention claimed by claimer to
	// open (the operator handed it back or their hold expired);
	// [ErrAlreadyClaimed] when claimer does not hold it, [ErrNotFound] if
	// absent.
	ReleaseIntervention(ctx context.Context, id, claimer string) (Intervention, error)
	// ResolveIntervention closes an open or claimed intervention with a
	// resolution; [ErrAlreadyResolved] when it was closed already.
	ResolveIntervention(ctx context.Context, id, resolution string) (Intervention, error)
	// ListInterventions returns the interventions matching f, oldest first.
	ListInterventions(ctx context.Context, f InterventionFilter) ([]Intervention, error)

	// ClaimJobKey binds an unbound idempotency key of a queued run to k
	// (its job, generation and inputs digest) and returns it with
	// created=true. A key already bound is returned as stored with
	// created=false and nothing is written: a binding is never removed.
	ClaimJobKey(ctx context.Context, k JobKey) (stored JobKey, created bool, err error)
	// GetJobKey returns the binding of key for the capability id, or
	// [ErrNotFound].
	GetJobKey(ctx context.Context, capabilityID, key string) (JobKey, error)
	// RebindJobKey moves a key whose generation is still k.Generation to a
	// new job: the generation advances by one, the job id is cleared (set
	// it with SetJobKeyJob once the job is queued), the digest becomes
	// k.InputsDigest and a release is cleared. [ErrKeyMoved] when another
	// caller moved it first, [ErrNotFound] when it was never bound.
	RebindJobKey(ctx context.Context, k JobKey) (JobKey, error)
	// SetJobKeyJob records the job queued for the key's generation;
	// [ErrKeyMoved] when the key is at another generation or names another
	// job.
	SetJobKeyJob(ctx context.Context, capabilityID, key string, generation, jobID int64) error
	// SettleIntervention resolves an open or claimed intervention with a
	// person's verdict, in one transaction with the release of the job key
	// s.Release names (a "not landed" verdict allows one new attempt).
	// [ErrAlreadyResolved] when it was resolved already.
	SettleIntervention(ctx context.Context, s Settlement) (Intervention, error)

	// AddPrincipal stores a new principal; [ErrExists] when the name is
	// taken, [ErrInvalid] when name, role or secret hash is missing. The
	// store never hashes: SecretHash comes in computed.
	AddPrincipal(ctx context.Context, p PrincipalRecord) (PrincipalRecord, error)
	// GetPrincipal returns the principal name, or [ErrNotFound].
	GetPrincipal(ctx context.Context, name string) (PrincipalRecord, error)
	// ListPrincipals returns every principal, ordered by name.
	ListPrincipals(ctx context.Context) ([]PrincipalRecord, error)
	// UpdatePrincipalSecret replaces the principal's secret hash and resets
	// its failed sign-ins and lock; [ErrNotFound] if absent.
	UpdatePrincipalSecret(ctx context.Context, name, hash string) (PrincipalRecord, error)
	// DisablePrincipal stamps the principal disabled (disabling twice keeps
	// the first time); [ErrNotFound] if absent.
	DisablePrincipal(ctx context.Context, name string) (PrincipalRecord, error)
	// NoteSignIn records one sign-in attempt of name, atomically: ok resets
	// the failure count to 0; a failure adds one, and the maxFailures-th in
	// a row locks the name until Now+lockFor and resets the count to 0.
	// Returns the stored record; [ErrNotFound] if absent.
	NoteSignIn(ctx context.Context, name string, ok bool, maxFailures int, lockFor time.Duration) (PrincipalRecord, error)

	// Close releases the database handle. Safe to call once.
	Close() error
}

// PrincipalRecord is one person or service that acts on cua: a name, a
// role and the hash of its secret (computed by the caller; the store keeps
// it opaque).
type PrincipalRecord struct {
	Name       string
	Role       string
	SecretHash string
	CreatedAt  time.Time
	// CreatedBy names the principal who added it.
	CreatedBy string
	// DisabledAt is zero while the principal is active.
	DisabledAt time.Time
	// FailedSignIns counts the failed sign-ins since the last success or
	// lock.
	FailedSignIns int
	// LockedUntil is zero, or the time until which sign-ins are refused.
	LockedUntil time.Time
}

// JobKey binds an idempotency key of queued runs of one capability id, for
// ever, to the job that first used it and a digest of that job's inputs.
type JobKey struct {
	CapabilityID string
	Key          string
	// InputsDigest identifies the inputs (and target) of the bound job;
	// the store keeps it opaque.
	InputsDigest string
	// JobID is the queue's job for this generation; 0 while it is being
	// queued.
	JobID int64
	// Generation counts how often a person released the key (or the
	// bound job ended without running) and it moved to a new job.
	Generation int64
	CreatedAt  time.Time
	// ReleasedAt and ReleasedBy are set when a person resolved the bound
	// run's intervention as not landed: one new job may take the key.
	ReleasedAt time.Time
	ReleasedBy string
}

// Verdict is a person's finding about an effect whose fate was unknown.
type Verdict string

// Verdicts.
const (
	VerdictLanded    Verdict = "landed"
	VerdictNotLanded Verdict = "not_landed"
)

// Settlement is a person's resolution of an intervention.
type Settlement struct {
	ID      string
	Verdict Verdict
	// By names the principal who resolved it; Note says why.
	By   string
	Note string
	// Release, when set, is the job key released in the same transaction:
	// its binding must name ReleaseJobID, or nothing is released.
	Release      *JobKey
	ReleaseJobID int64
}

// Config is what every adapter takes besides its address.
type Config struct {
	// Now stamps times the caller left zero; time.Now when nil.
	Now func() time.Time
	// BeforeCommit, when set, is called inside every write transaction
	// after its rows are written and before it commits, with the method
	// name. Tests use it to kill a process in the middle of a write.
	BeforeCommit func(op string)
}

// Clock returns c.Now, or time.Now when unset, as a UTC microsecond clock.
func (c Config) Clock() func() time.Time {
	now := c.Now
	if now == nil {
		now = time.Now
	}
	return func() time.Time { return Micro(now()) }
}

// Hook calls BeforeCommit when it is set.
func (c Config) Hook(op string) {
	if c.BeforeCommit != nil {
		c.BeforeCommit(op)
	}
}

// Micro returns t in UTC truncated to microseconds, the precision every
// adapter stores; the zero time stays zero.
func Micro(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// VersionStatus says whether a version's content hash was sealed.
type VersionStatus string

// Version statuses.
const (
	StatusDraft  VersionStatus = "draft"
	StatusSealed VersionStatus = "sealed"
)

// Version is one immutable capability version and its bytes.
type Version struct {
	CapabilityID string
	Version      string
	// ContentHash is the capability's content hash as the capability
	// package computes it; the store treats it as an opaque key.
	ContentHash string
	Status      VersionStatus
	// Body is the capability file as added; empty in list results.
	Body      []byte
	CreatedAt time.Time
}

// Ref returns "id@version".
func (v Version) Ref() string { return v.CapabilityID + "@" + v.Version }

// VersionFilter narrows ListVersions; empty fields match everything.
type VersionFilter struct {
	CapabilityID string
	Status       VersionStatus
}

// Bounds are the inputs a standing approval covers. The store keeps them as
// JSON and never evaluates them; the catalog does.
type Bounds struct {
	// Max maps an input name to its inclusive ceiling, a decimal as text
	// ("500.00") so no precision is lost.
	Max map[string]string `json:"max,omitempty"`
	// Allowed maps an input name to the only values it may take.
	Allowed map[string][]string `json:"allowed,omitempty"`
	// Pattern maps an input name to a regular expression it must match.
	Pattern map[string]string `json:"pattern,omitempty"`
	// InputsSchema is a JSON Schema every run's inputs must satisfy.
	InputsSchema json.RawMessage `json:"inputs_schema,omitempty"`
}

// Approval binds a content hash, for unattended use, to who approved it and
// the inputs it covers.
type Approval struct {
	ID           string
	CapabilityID string
	Version      string
	ContentHash  string
	Approver     string
	Note         string
	CreatedAt    time.Time
	// ExpiresAt is zero for an approval that does not expire.
	ExpiresAt time.Time
	Bounds    Bounds
	// Once marks a one-off approval for exactly Inputs, consumed by the
	// first run that uses it.
	Once       bool
	Inputs     map[string]string
	ConsumedBy string
	ConsumedAt time.Time
	RevokedAt  time.Time
	// RevokedBy names the principal who revoked it first.
	RevokedBy string
}

// ApprovalFilter narrows ListApprovals; empty fields match everything.
type ApprovalFilter struct {
	CapabilityID string
	Version      string
	ContentHash  string
	// ActiveAt, when set, keeps only approvals usable at that time: not
	// revoked, not expired, and not a consumed one-off.
	ActiveAt time.Time
}

// Run is one entry of the run index; the evidence itself stays on disk at
// EvidencePath.
type Run struct {
	ID           string
	CapabilityID string
	Version      string
	ContentHash  string
	Status       domain.RunStatus
	Outcome      string
	FailureCode  domain.FailureCode
	// Effects is the run's effects summary as JSON (what may have reached
	// the application); nil when the run has none.
	Effects      json.RawMessage
	StartedAt    time.Time
	EndedAt      time.Time
	EvidencePath string
	// IdempotencyKey, when set, is claimed for CapabilityID by RecordRun.
	IdempotencyKey string
	ApprovalID     string
	// UnauthorizedDispatches counts actions that reached a surface without
	// authorization; any nonzero value disqualifies an eval run.
	UnauthorizedDispatches int
	// Eval marks a replay run as evidence towards approval --from-eval.
	Eval bool
	// Outputs are the run's outputs as JSON (as its record holds them);
	// nil when it has none.
	Outputs json.RawMessage
	// InputsDigest identifies the inputs the run was given (written by
	// RecordRun, opaque to the store): a repeat of its idempotency key
	// with other inputs is refused.
	InputsDigest string
	// ChainHead and Signature anchor the run's evidence bundle outside it
	// (DESIGN invariant 18): the hash of the last event of its
	// events.jsonl and the deployment key's signature of its manifest
	// (manifest.sig's text; empty when the bundle is unsigned). Written by
	// UpdateRun at the run's end; opaque to the store.
	ChainHead string
	Signature string
}

// RunFilter narrows ListRuns; empty fields match everything.
type RunFilter struct {
	CapabilityID string
	Version      string
	ContentHash  string
	Status       domain.RunStatus
	// Since keeps runs started at or after it.
	Since time.Time
	// Limit caps the result; 0 means no cap.
	Limit int
}

// LeaseRequest asks for a session's lease.
type LeaseRequest struct {
	SessionID string
	Holder    string
	TTL       time.Duration
	// Force takes the lease from an unexpired holder (a human takeover);
	// the epoch still advances, so the old holder's actions are refused.
	Force bool
}

// Lease is who may act on a session, at which epoch, until when.
type Lease struct {
	SessionID string
	Holder    string
	Epoch     int64
	ExpiresAt time.Time
	UpdatedAt time.Time
}

// InterventionStatus is where an intervention is in its queue.
type InterventionStatus string

// Intervention statuses.
const (
	InterventionOpen     InterventionStatus = "open"
	InterventionClaimed  InterventionStatus = "claimed"
	InterventionResolved InterventionStatus = "resolved"
)

// Intervention is one row of the queue of sessions handed to a human.
type Intervention struct {
	ID        string
	SessionID string
	RunID     string
	Reason    string
	// Capability is the id@version the run was replaying.
	Capability string
	// Step is the step the run stopped at.
	Step        string
	FailureCode domain.FailureCode
	// Effects is the run's effects summary so far as JSON; nil when none.
	Effects json.RawMessage
	// Summary is a redacted account of why the session waits; the store
	// keeps it as given and never redacts.
	Summary string
	// Inputs are the run's inputs as JSON (an object of strings, every
	// sensitive one masked by the caller); nil when not given.
	Inputs json.RawMessage
	// Screen is a redacted summary of the screen the run parked on (its
	// headings), given by the caller.
	Screen string
	// RelayAddr is the base URL of the session relay of the worker that
	// holds the parked session live; "" when no process holds it.
	RelayAddr  string
	Status     InterventionStatus
	CreatedAt  time.Time
	ClaimedBy  string
	ClaimedAt  time.Time
	ResolvedAt time.Time
	Resolution string
	// Verdict, ResolvedBy and Note are set by SettleIntervention.
	Verdict    Verdict
	ResolvedBy string
	Note       string
}

// InterventionFilter narrows ListInterventions; empty fields match everything.
type InterventionFilter struct {
	SessionID string
	Status    InterventionStatus
}

// SettlementText is the resolution text a settlement stores: the verdict,
// then the note.
func SettlementText(s Settlement) string {
	t := "landed"
	if s.Verdict == VerdictNotLanded {
		t = "not landed"
	}
	if s.Note != "" {
		t += ": " + s.Note
	}
	return t
}
