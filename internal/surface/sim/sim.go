// Package sim is an in-memory surface for fast engine tests: an App written
// in Go renders snapshots and handles authorized actions, with no browser.
// It holds to the same port contract as the browser adapter.
package sim

import (
	"context"
	"fmt"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

// App is the simulated application.
type App interface {
	// Render returns the current screen (Seq is set by the surface).
	Render() *domain.UiSnapshot
	// Handle performs an authorized action; it returns whether the action
	// navigated.
	Handle(a policy.AuthorizedAction) (navigated bool, err error)
}

// Surface adapts an App to surface.Surface. Safe for concurrent use.
type Surface struct {
	mu      sync.Mutex
	app     App
	seq     uint64
	version uint64            // bumped on every change
	seen    map[uint64]uint64 // observation seq -> version it saw
	changed chan struct{}
	closed  bool
	crashed bool
	Actions []policy.AuthorizedAction
}

var _ surface.Surface = (*Surface)(nil)

// New returns a surface over app.
func New(app App) *Surface {
	return &Surface{app: app, seen: map[uint64]uint64{}, changed: make(chan struct{})}
}

// Observe renders the app.
func (s *Surface) Observe(ctx context.Context) (*domain.UiSnapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	snap := s.app.Render()
	s.seq++
	snap.Seq = s.seq
	s.seen[s.seq] = s.version
	return snap, nil
}

func (s *Surface) usable() error {
	if s.crashed {
		return fmt.Errorf("sim: %w", surface.ErrCrashed)
	}
	if s.closed {
		return fmt.Errorf("sim: closed: %w", surface.ErrCrashed)
	}
	return nil
}

// Dispatch hands an authorized action to the app.
func (s *Surface) Dispatch(ctx context.Context, a policy.AuthorizedAction) (surface.Result, error) {
	if !a.Valid() {
		return surface.Result{}, fmt.Errorf("sim: %w", surface.ErrUnauthorized)
	}
	if a.NeedsSecret() {
		return surface.Result{}, fmt.Errorf("sim: secret not bound: %w", surface.ErrUnauthorized)
	}
	if err := ctx.Err(); err != nil {
		return surface.Result{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return surface.Result{}, err
	}
	nav, err := s.app.Handle(a)
	s.Actions = append(s.Actions, a)
	s.bump()
	if err != nil {
		return surface.Result{}, err
	}
	return surface.Result{Navigated: nav}, nil
}

// Changed tells waiters the app changed on its own (a timer, a push).
func (s *Surface) Changed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bump()
}

func (s *Surface) bump() {
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
}

// Crash makes every later call fail with surface.ErrCrashed.
func (s *Surface) Crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crashed = true
	s.bump()
}

// WaitChange waits for a change after observation since.
func (s *Surface) WaitChange(ctx context.Context, since uint64) error {
	for {
		s.mu.Lock()
		if err := s.usable(); err != nil {
			s.mu.Unlock()
			return err
		}
		v, ok := s.seen[since]
		if !ok || s.version > v {
			s.mu.Unlock()
			return nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Screenshot is not available in the simulation.
func (s *Surface) Screenshot(context.Context) ([]byte, error) {
	return nil, surface.ErrNoFrame
}

// Close marks the surface closed; it is idempotent.
func (s *Surface) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
