package hitl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultHoldTTL is how long an operator's claim lasts without a renewal.
const DefaultHoldTTL = 2 * time.Minute

// ErrUnknownSession is returned for a session this broker does not hold
// live (it may still be listed from the queue, waiting in another process
// or left behind by one that ended).
var ErrUnknownSession = errors.New("session is not live in this process")

// BrokerConfig configures a Broker.
type BrokerConfig struct {
	// Queue persists the intervention queue; required.
	Queue Queue
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// HoldTTL is how long a claim lasts unrenewed; DefaultHoldTTL when 0.
	HoldTTL time.Duration
	// Redact redacts a summary before it is queued; required, so nothing
	// unredacted reaches the queue.
	Redact func(string) string
	// NewID names an intervention; required.
	NewID  func() string
	Logger *slog.Logger
}

// Broker moves the leases of the sessions in this process through their
// hand-off (escalate, claim, renew, release, resume, expire) and keeps the
// intervention queue in step with them. Of concurrent claims of one
// session exactly one wins. Safe for concurrent use.
type Broker struct {
	cfg BrokerConfig

	mu       sync.Mutex
	sessions map[string]*session
}

type session struct {
	lease   *Lease
	waiting Waiting
}

// NewBroker returns a broker over cfg.Queue.
func NewBroker(cfg BrokerConfig) (*Broker, error) {
	if cfg.Queue == nil || cfg.Redact == nil || cfg.NewID == nil {
		return nil, errors.New("hitl: broker needs a queue, a redactor and an id source")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HoldTTL <= 0 {
		cfg.HoldTTL = DefaultHoldTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Broker{cfg: cfg, sessions: map[string]*session{}}, nil
}

// HoldTTL returns how long a claim lasts unrenewed.
func (b *Broker) HoldTTL() time.Duration { return b.cfg.HoldTTL }

// Escalate pauses the session whose lease holder holds at epoch and queues
// w (its ID and Status are set here; Summary is redacted here). It returns
// the queued row with the paused lease.
func (b *Broker) Escalate(ctx context.Context, lease *Lease, holder string, epoch uint64, w Waiting) (Waiting, error) {
	if w.SessionID == "" {
		return Waiting{}, errors.New("escalate: session id is required")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.sessions[w.SessionID]; ok {
		return Waiting{}, fmt.Errorf("escalate %s: the session is already waiting", w.SessionID)
	}
	st, err := lease.Escalate(holder, epoch)
	if err != nil {
		return Waiting{}, err
	}
	w.ID, w.Status, w.ClaimedBy = b.cfg.NewID(), WaitOpen, ""
	w.Summary = b.cfg.Redact(w.Summary)
	if w.CreatedAt.IsZero() {
		w.CreatedAt = b.cfg.Now().UTC()
	}
	if err := b.cfg.Queue.Put(ctx, w); err != nil {
		return Waiting{}, fmt.Errorf("escalate %s: queue: %w", w.SessionID, err)
	}
	w.Lease = &st
	b.sessions[w.SessionID] = &session{lease: lease, waiting: w}
	b.cfg.Logger.InfoContext(ctx, "session escalated", slog.String("session", w.SessionID),
		slog.String("code", string(w.FailureCode)), slog.String("step", w.Step))
	return w, nil
}

func (b *Broker) get(id string) (*session, error) {
	s, ok := b.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%s: %w", id, ErrUnknownSession)
	}
	return s, nil
}

// syncLocked brings the queue row of s in line with its lease after an
// expiry noticed by anyone: a hold that lapsed reopens the row.
func (b *Broker) syncLocked(ctx context.Context, s *session) {
	st := s.lease.Status()
	if s.waiting.Status == WaitClaimed && st.State != StateHumanControl {
		if err := b.cfg.Queue.Release(ctx, s.waiting.ID, s.waiting.ClaimedBy); err != nil && !errors.Is(err, ErrQueueConflict) {
			b.cfg.Logger.WarnContext(ctx, "queue release after expiry", slog.String("session", s.waiting.SessionID), slog.Any("error", err))
			return
		}
		b.cfg.Logger.InfoContext(ctx, "hold expired", slog.String("session", s.waiting.SessionID), slog.String("operator", s.waiting.ClaimedBy))
		s.waiting.Status, s.waiting.ClaimedBy = WaitOpen, ""
	}
}

// Claim gives the paused session to operator for the hold TTL. A session
// held by someone else, or not waiting, is a *ConflictError.
func (b *Broker) Claim(ctx context.Context, sessionID, operator string) (Status, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.get(sessionID)
	if err != nil {
		return Status{}, err
	}
	b.syncLocked(ctx, s)
	st, err := s.lease.Claim(operator, b.cfg.HoldTTL)
	if err != nil {
		return st, err
	}
	if err := b.cfg.Queue.Claim(ctx, s.waiting.ID, operator); err != nil {
		// The queue is the record a restarted console reads: without the
		// row the claim does not stand.
		if _, rerr := s.lease.Release(operator, st.Epoch); rerr != nil {
			b.cfg.Logger.WarnContext(ctx, "undo claim", slog.Any("error", rerr))
		}
		return Status{}, fmt.Errorf("claim %s: queue: %w", sessionID, err)
	}
	s.waiting.Status, s.waiting.ClaimedBy = WaitClaimed, operator
	return st, nil
}

// Renew extends operator's hold at epoch.
func (b *Broker) Renew(ctx context.Context, sessionID, operator string, epoch uint64) (Status, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.get(sessionID)
	if err != nil {
		return Status{}, err
	}
	defer b.syncLocked(ctx, s)
	return s.lease.Renew(operator, epoch, b.cfg.HoldTTL)
}

// Release hands the session operator holds at epoch back to PAUSED.
func (b *Broker) Release(ctx context.Context, sessionID, operator string, epoch uint64) (Status, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.get(sessionID)
	if err != nil {
		return Status{}, err
	}
	st, err := s.lease.Release(operator, epoch)
	if err != nil {
		b.syncLocked(ctx, s)
		return st, err
	}
	b.syncLocked(ctx, s)
	return st, nil
}

// Resume moves the paused session to RESUMING and closes its queue row:
// the parked run wakes (see [Broker.WaitResume]). by names who resumed.
func (b *Broker) Resume(ctx context.Context, sessionID, by string) (Status, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.get(sessionID)
	if err != nil {
		return Status{}, err
	}
	b.syncLocked(ctx, s)
	st, err := s.lease.Resume()
	if err != nil {
		return st, err
	}
	if err := b.cfg.Queue.Resolve(ctx, s.waiting.ID, "resumed by "+by); err != nil {
		b.cfg.Logger.WarnContext(ctx, "queue resolve on resume", slog.String("session", sessionID), slog.Any("error", err))
	}
	delete(b.sessions, sessionID)
	return st, nil
}

// Abandon closes the session's queue row with resolution (a parked run
// that timed out or was canceled) and forgets the session. An operator's
// hold is ended first, so nobody acts on a session whose run is gone.
func (b *Broker) Abandon(ctx context.Context, sessionID, resolution string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.get(sessionID)
	if err != nil {
		return err
	}
	st := s.lease.Status()
	if op, ok := Operator(st.Holder); ok && st.State == StateHumanControl {
		_, _ = s.lease.Release(op, st.Epoch)
	}
	delete(b.sessions, sessionID)
	if err := b.cfg.Queue.Resolve(ctx, s.waiting.ID, resolution); err != nil {
		return fmt.Errorf("abandon %s: queue: %w", sessionID, err)
	}
	return nil
}

// Lease returns the live lease of a session.
func (b *Broker) Lease(sessionID string) (*Lease, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.get(sessionID)
	if err != nil {
		return nil, err
	}
	return s.lease, nil
}

// Sweep expires every abandoned hold and reopens its queue row. A console
// calls it on a ticker; every other method also notices an expiry.
func (b *Broker) Sweep(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.sessions {
		s.lease.Expire()
		b.syncLocked(ctx, s)
	}
}

// List returns the queue's pending rows, oldest first, each with its live
// lease when the session lives in this process.
func (b *Broker) List(ctx context.Context) ([]Waiting, error) {
	b.mu.Lock()
	for _, s := range b.sessions {
		b.syncLocked(ctx, s)
	}
	live := make(map[string]Status, len(b.sessions))
	for id, s := range b.sessions {
		live[id] = s.lease.Status()
	}
	b.mu.Unlock()
	rows, err := b.cfg.Queue.Pending(ctx)
	if err != nil {
		return nil, fmt.Errorf("list interventions: %w", err)
	}
	for i := range rows {
		if st, ok := live[rows[i].SessionID]; ok {
			rows[i].Lease = &st
		}
	}
	return rows, nil
}

// WaitResume blocks until the session's lease is RESUMING (a person
// resumed it) and returns that status, or returns ctx's error. It notices
// expiries while it waits.
func WaitResume(ctx context.Context, lease *Lease) (Status, error) {
	for {
		ch := lease.Changed()
		st := lease.Status()
		if st.State == StateResuming {
			return st, nil
		}
		wait := time.Hour
		if !st.ExpiresAt.IsZero() {
			wait = time.Until(st.ExpiresAt) + time.Millisecond
		}
		t := time.NewTimer(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return st, ctx.Err()
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// Hold escalates the session (see [Broker.Escalate]) and blocks until a
// person resumes it, returning nil with the lease RESUMING; or, when ctx
// ends first, abandons the session (no operator may act on it any more)
// and returns ctx's error.
func (b *Broker) Hold(ctx context.Context, lease *Lease, holder string, epoch uint64, w Waiting) error {
	if _, err := b.Escalate(ctx, lease, holder, epoch, w); err != nil {
		return err
	}
	if _, err := WaitResume(ctx, lease); err != nil {
		if aerr := b.Abandon(context.WithoutCancel(ctx), w.SessionID, "not resumed: "+err.Error()); aerr != nil {
			b.cfg.Logger.WarnContext(ctx, "abandon a parked session", slog.String("session", w.SessionID), slog.Any("error", aerr))
		}
		return err
	}
	return nil
}
