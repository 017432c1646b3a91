// Package hitl owns the human-in-the-loop primitives: the session [Lease]
// (who may act on a session, in which state, at which epoch, until when),
// the [Broker] that moves leases through escalation, claim, release,
// resume and expiry, and the intervention queue that says why each session
// waits ([Waiting], persisted through the [Queue] port).
//
// hitl never acts on a surface and never authorizes an action: it only
// says who holds a session at which epoch, which runtime checks before
// every dispatch and policy binds into every AuthorizedAction. It never
// opens a store or a browser itself; its Queue adapter lives in
// hitl/hitlstore.
package hitl

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
)

// State is where a session is in its hand-off cycle.
type State string

// Lease states. A run moves RUNNING → PAUSED (escalated) → HUMAN_CONTROL
// (claimed) → PAUSED (released or expired) → RESUMING (resumed) → RUNNING
// (the engine re-observed and acts again).
const (
	StateRunning      State = "RUNNING"
	StatePaused       State = "PAUSED"
	StateHumanControl State = "HUMAN_CONTROL"
	StateResuming     State = "RESUMING"
)

// HumanPrefix starts the holder name of an operator: "human:<operator>".
const HumanPrefix = "human:"

// ErrConflict is returned (wrapped in a *ConflictError) when a lease is not
// in the state a transition needs: a claim of a session another operator
// holds, a release by someone who does not hold it.
var ErrConflict = errors.New("lease conflict")

// ConflictError says why a transition was refused and what the lease is.
type ConflictError struct {
	Op     string
	Status Status
	Reason string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s: %s (session is %s, held by %q at epoch %d)", e.Op, e.Reason, e.Status.State, e.Status.Holder, e.Status.Epoch)
}

// Unwrap makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// Status is a lease as read at one moment.
type Status struct {
	Holder string `json:"holder"`
	State  State  `json:"state"`
	Epoch  uint64 `json:"epoch"`
	// ExpiresAt is when a human's hold lapses back to PAUSED; zero when
	// the holder is the automation.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Lease says who holds a session. Every transition increments the epoch, so
// an action authorized under an older epoch is refused even if its holder
// later gets the session back (DESIGN invariant 8). Only the holder, at the
// current epoch, in state RUNNING (the automation) or HUMAN_CONTROL (an
// operator whose hold has not expired), may act. Safe for concurrent use.
type Lease struct {
	mu         sync.Mutex
	holder     string
	automation string
	state      State
	epoch      uint64
	expiresAt  time.Time
	now        func() time.Time
	// changed is closed and replaced on every transition.
	changed chan struct{}
}

// NewLease returns a lease held by holder (the automation) at epoch 1,
// RUNNING, timed by time.Now.
func NewLease(holder string) *Lease { return NewLeaseAt(holder, nil) }

// NewLeaseAt is NewLease with an injected clock (nil is time.Now).
func NewLeaseAt(holder string, now func() time.Time) *Lease {
	if now == nil {
		now = time.Now
	}
	return &Lease{holder: holder, automation: holder, state: StateRunning, epoch: 1, now: now, changed: make(chan struct{})}
}

// Holder returns the current holder and epoch.
func (l *Lease) Holder() (string, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	return l.holder, l.epoch
}

// Status returns the lease's holder, state, epoch and expiry.
func (l *Lease) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	return l.statusLocked()
}

func (l *Lease) statusLocked() Status {
	return Status{Holder: l.holder, State: l.state, Epoch: l.epoch, ExpiresAt: l.expiresAt}
}

// Changed returns a channel closed at the next transition (including an
// expiry noticed by any reader). Read Status after it fires.
func (l *Lease) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	return l.changed
}

// transitionLocked moves the lease and advances the epoch.
func (l *Lease) transitionLocked(holder string, state State, expires time.Time) Status {
	l.holder, l.state, l.expiresAt = holder, state, expires
	l.epoch++
	close(l.changed)
	l.changed = make(chan struct{})
	return l.statusLocked()
}

// expireLocked returns an abandoned human hold to PAUSED.
func (l *Lease) expireLocked() bool {
	if l.state == StateHumanControl && !l.expiresAt.IsZero() && !l.now().Before(l.expiresAt) {
		l.transitionLocked(l.automation, StatePaused, time.Time{})
		return true
	}
	return false
}

// Transfer hands the session to holder, keeping its state, and returns the
// new epoch. It is the raw move under the named transitions below; callers
// that model a hand-off use those.
func (l *Lease) Transfer(holder string) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.transitionLocked(holder, l.state, l.expiresAt).Epoch
}

// Check returns a LEASE_LOST error unless holder holds the lease at epoch
// and may act now: RUNNING, or HUMAN_CONTROL before its expiry.
func (l *Lease) Check(holder string, epoch uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	if l.holder != holder {
		return domain.Errorf(domain.CodeLeaseLost, "session is held by %q, not %q", l.holder, holder)
	}
	if l.epoch != epoch {
		return domain.Errorf(domain.CodeLeaseLost, "lease epoch is %d, action was authorized at %d", l.epoch, epoch)
	}
	if l.state != StateRunning && l.state != StateHumanControl {
		return domain.Errorf(domain.CodeLeaseLost, "session is %s: nobody may act", l.state)
	}
	return nil
}

func (l *Lease) conflict(op, reason string) error {
	return &ConflictError{Op: op, Status: l.statusLocked(), Reason: reason}
}

// Escalate moves a RUNNING session to PAUSED: the automation stops acting
// and the session waits for a person. Only the automation holder at its
// current epoch may escalate.
func (l *Lease) Escalate(holder string, epoch uint64) (Status, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	if l.state != StateRunning || l.holder != holder || l.epoch != epoch {
		return l.statusLocked(), l.conflict("escalate", fmt.Sprintf("%q at epoch %d does not hold a running session", holder, epoch))
	}
	l.automation = holder
	return l.transitionLocked(l.automation, StatePaused, time.Time{}), nil
}

// Claim gives a PAUSED session to operator ("human:<operator>") until
// now+ttl. Of any number of concurrent claims exactly one wins; the others
// get a *ConflictError.
func (l *Lease) Claim(operator string, ttl time.Duration) (Status, error) {
	if operator == "" || ttl <= 0 {
		return Status{}, fmt.Errorf("claim: operator and a positive ttl are required")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	if l.state != StatePaused {
		return l.statusLocked(), l.conflict("claim", "session is not waiting for an operator")
	}
	return l.transitionLocked(HumanPrefix+operator, StateHumanControl, l.now().Add(ttl)), nil
}

// Renew extends the hold of operator at epoch to now+ttl; it is not a
// transition, so the epoch stays.
func (l *Lease) Renew(operator string, epoch uint64, ttl time.Duration) (Status, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	if l.state != StateHumanControl || l.holder != HumanPrefix+operator || l.epoch != epoch {
		return l.statusLocked(), l.conflict("renew", fmt.Sprintf("operator %q does not hold the session at epoch %d", operator, epoch))
	}
	l.expiresAt = l.now().Add(ttl)
	return l.statusLocked(), nil
}

// Release hands a session operator holds back to PAUSED.
func (l *Lease) Release(operator string, epoch uint64) (Status, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	if l.state != StateHumanControl || l.holder != HumanPrefix+operator || l.epoch != epoch {
		return l.statusLocked(), l.conflict("release", fmt.Sprintf("operator %q does not hold the session at epoch %d", operator, epoch))
	}
	return l.transitionLocked(l.automation, StatePaused, time.Time{}), nil
}

// Resume moves a PAUSED session to RESUMING, held by the automation that
// escalated it: the engine re-observes before it acts (see [Lease.Run]).
func (l *Lease) Resume() (Status, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked()
	if l.state != StatePaused {
		return l.statusLocked(), l.conflict("resume", "only a paused session resumes (release it first)")
	}
	return l.transitionLocked(l.automation, StateResuming, time.Time{}), nil
}

// Run moves a RESUMING session back to RUNNING for its automation holder
// and returns the epoch it acts under from now on.
func (l *Lease) Run(holder string) (Status, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != StateResuming || l.holder != holder {
		return l.statusLocked(), l.conflict("run", fmt.Sprintf("%q cannot take back a session that is not resuming for it", holder))
	}
	return l.transitionLocked(holder, StateRunning, time.Time{}), nil
}

// Expire returns an abandoned hold (HUMAN_CONTROL past its expiry) to
// PAUSED and reports whether it did. Every other method does this too.
func (l *Lease) Expire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expireLocked()
}

// Operator returns the operator name of a "human:<operator>" holder.
func Operator(holder string) (string, bool) {
	return strings.CutPrefix(holder, HumanPrefix)
}
