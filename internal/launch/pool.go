package launch

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
)

// ErrPoolClosed is returned by Take after Close.
var ErrPoolClosed = errors.New("session pool closed")

// PoolOptions bound a Pool's warm sessions.
type PoolOptions struct {
	// TTL is how long a session may sit idle and still be lent again
	// (keep it under the application's own session timeout); 0 keeps
	// none: every Take opens a fresh session.
	TTL time.Duration
	// MaxIdle is how many idle sessions are kept (default 1).
	MaxIdle int
	// MaxUses retires a session after this many runs (default 100), so a
	// long-lived browser context does not grow without bound.
	MaxUses int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Pool lends warm sessions: a session a run ended well on (SUCCESS or a
// business outcome) goes back to the pool, still signed on, and the next
// Take lends it again, saying it is warm. A session a run ended any other
// way (failed, needs a human, no record) is closed: its screen is not
// known to be one a run may start from. Safe for concurrent use.
type Pool struct {
	open func(context.Context) (surface.Surface, error)
	o    PoolOptions

	mu     sync.Mutex
	closed bool
	idle   []*pooled
	lent   map[surface.Surface]*pooled
}

type pooled struct {
	s    surface.Surface
	uses int
	last time.Time
	// secrets are the secret values resolved in the session so far (its
	// sign-on's operator id and password): whatever it shows later may
	// echo them, so every run that takes it redacts them.
	secrets []string
}

// NewPool returns a Pool that opens fresh sessions with open.
func NewPool(open func(context.Context) (surface.Surface, error), o PoolOptions) *Pool {
	if o.MaxIdle <= 0 {
		o.MaxIdle = 1
	}
	if o.MaxUses <= 0 {
		o.MaxUses = 100
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Pool{open: open, o: o, lent: map[surface.Surface]*pooled{}}
}

// Take lends a session: the most recently used idle one within the TTL
// (warm true), or a fresh one. Idle sessions past the TTL are closed.
func (p *Pool) Take(ctx context.Context) (surface.Surface, bool, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, ErrPoolClosed
	}
	stale := p.expireLocked()
	var w *pooled
	if n := len(p.idle); n > 0 {
		w, p.idle = p.idle[n-1], p.idle[:n-1]
		p.lent[w.s] = w
	}
	p.mu.Unlock()
	closeAll(stale)
	if w != nil {
		return w.s, true, nil
	}
	s, err := p.open(ctx)
	if err != nil {
		return nil, false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		s.Close()
		return nil, false, ErrPoolClosed
	}
	p.lent[s] = &pooled{s: s}
	return s, false, nil
}

// Return takes back a session Take lent, with the record of the run that
// used it (nil when the run made none). It keeps the session only when the
// run ended SUCCESS or BUSINESS_OUTCOME, warm sessions are on, the session
// has uses left and the pool has room; otherwise it closes it.
func (p *Pool) Return(s surface.Surface, rec *domain.RunRecord) {
	p.mu.Lock()
	w, ok := p.lent[s]
	delete(p.lent, s)
	keep := ok && !p.closed && p.o.TTL > 0 && rec != nil &&
		(rec.Status == domain.StatusSuccess || rec.Status == domain.StatusBusinessOutcome)
	if keep {
		w.uses++
		w.last = p.o.Now()
		keep = w.uses < p.o.MaxUses
	}
	var evicted []*pooled
	if keep {
		p.idle = append(p.idle, w)
		if n := len(p.idle) - p.o.MaxIdle; n > 0 {
			evicted, p.idle = append(evicted, p.idle[:n]...), append([]*pooled(nil), p.idle[n:]...)
		}
	}
	p.mu.Unlock()
	if !keep {
		s.Close()
	}
	closeAll(evicted)
}

// Secrets returns the secret values resolved in the lent session s by
// the runs that used it before (see Remember), for the run that took it
// to register with its redactor before it writes anything: a warm
// session still shows what its sign-on typed (DESIGN invariants 6, 15).
func (p *Pool) Secrets(s surface.Surface) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.lent[s]; ok {
		return slices.Clone(w.secrets)
	}
	return nil
}

// Remember adds secret values a run resolved in the lent session s to
// the session's set; they stay with it, in this process's memory only,
// until it is closed. Empty values are ignored.
func (p *Pool) Remember(s surface.Surface, values ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.lent[s]
	if !ok {
		return
	}
	for _, v := range values {
		if v != "" && !slices.Contains(w.secrets, v) {
			w.secrets = append(w.secrets, v)
		}
	}
}

// Idle reports how many sessions wait in the pool.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Close closes the idle sessions; sessions still lent are closed when
// they are returned.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	closeAll(idle)
}

// expireLocked removes the idle sessions past the TTL and returns them to
// be closed outside the lock.
func (p *Pool) expireLocked() []*pooled {
	var stale []*pooled
	kept := p.idle[:0]
	now := p.o.Now()
	for _, w := range p.idle {
		if now.Sub(w.last) > p.o.TTL {
			stale = append(stale, w)
			continue
		}
		kept = append(kept, w)
	}
	p.idle = kept
	return stale
}

func closeAll(ws []*pooled) {
	for _, w := range ws {
		w.s.Close()
	}
}
