// Package sim is an in-memory surface for fast engine tests: an [App]
// written in Go renders snapshots and handles authorized actions, with no
// browser. [Surface] holds an App to the same port contract as the browser
// adapter (it passes the surfacetest conformance suite with [Fixture]).
//
// Two apps ship with the package:
//
//   - [Fixture] is the conformance suite's fixture app (pages "main",
//     "second" and "frames"), exactly as surfacetest describes it;
//   - [Flow] is a small declarative builder for engine tests: [Screen]s made
//     of [Node]s, and handlers keyed by (role, name) that switch screens,
//     set values, inject faults and append to a ledger.
package sim

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

// App is the simulated application. A [Surface] serialises every call, so
// an App needs no locking of its own for Render and Handle.
type App interface {
	// Render returns the current screen as a raw snapshot (Seq is set by
	// the surface). Every node an action may target carries a Ref that is
	// unique on the screen and never reused by a later page load.
	Render() *domain.UiSnapshot
	// Handle performs an authorized action and returns whether it
	// navigated. The surface has already refused invalid, unbound-secret,
	// engine-side (extract, wait_for, assert), stale and disabled-target
	// actions. An error fails the action; an app should change nothing
	// before it fails unless it models a partial failure on purpose.
	Handle(a policy.AuthorizedAction) (navigated bool, err error)
}

// Reacher is the optional ability of an App to say what an action really
// reaches beyond the node it names (the button at a container's centre, the
// control a label forwards its click to, the button Enter in a form submits
// with): the surface hands that to policy (AuthorizedAction.Admits) before
// the app sees the action, as the browser does with what its page holds.
type Reacher interface {
	Reaches(a policy.AuthorizedAction) []domain.Node
}

// Surface adapts an App to surface.Surface. Unlike the port requires, it is
// safe for concurrent use, so a test may crash or poke it while a run waits.
type Surface struct {
	mu      sync.Mutex
	app     App
	seq     uint64
	version uint64            // bumped on every change
	seen    map[uint64]uint64 // observation seq -> version it saw
	changed chan struct{}     // closed and replaced on every change
	closed  bool
	crashed bool
	actions []policy.AuthorizedAction
}

var _ surface.Surface = (*Surface)(nil)

// New returns a surface over app.
func New(app App) *Surface {
	return &Surface{app: app, seen: map[uint64]uint64{}, changed: make(chan struct{})}
}

// Observe renders the app. It returns an error wrapping surface.ErrCrashed
// after [Surface.Crash] or [Surface.Close].
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

// Dispatch hands an authorized action to the app. Before the app sees it,
// the surface refuses: an invalid (zero) action or one whose secret is not
// bound (surface.ErrUnauthorized); extract, wait_for and assert, which the
// engine performs on snapshots (surface.ErrUnsupported); a reload while the
// app renders a PostBacked snapshot (surface.ErrResubmit: a browser would
// send the form again); a target whose Ref
// is not on the current screen (surface.ErrStale); a disabled target (a
// plain error); and, for an app that is a [Reacher], an action that reaches
// a control its authorization does not cover (policy's denial, wrapping
// surface.ErrUnauthorized). Every action that reaches the app counts as a
// change.
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
	switch a.Type() {
	case domain.ActExtract, domain.ActWaitFor, domain.ActAssert:
		return surface.Result{}, fmt.Errorf("sim: %s is performed by the engine: %w", a.Type(), surface.ErrUnsupported)
	}
	if a.Type() == domain.ActReload && s.app.Render().PostBacked {
		return surface.Result{}, fmt.Errorf("sim: reload: the page came from a submitted form: %w", surface.ErrResubmit)
	}
	if n := a.Node(); n != nil {
		cur, ok := findRef(s.app.Render(), n.Ref)
		if !ok {
			return surface.Result{}, fmt.Errorf("sim: %s %q (ref %q): %w", n.Role, n.Name, n.Ref, surface.ErrStale)
		}
		if cur.States.Disabled {
			return surface.Result{}, fmt.Errorf("sim: %s %q is disabled", cur.Role, cur.Name)
		}
	}
	if r, ok := s.app.(Reacher); ok {
		if err := a.Admits(r.Reaches(a)); err != nil {
			return surface.Result{}, fmt.Errorf("sim: %w: %w", surface.ErrUnauthorized, err)
		}
	}
	s.actions = append(s.actions, a)
	nav, err := s.app.Handle(a)
	s.bump() // an app may have changed something before it failed
	if err != nil {
		return surface.Result{}, err
	}
	return surface.Result{Navigated: nav, URL: s.app.Render().URL}, nil
}

// findRef returns the node of snap whose Ref is ref.
func findRef(snap *domain.UiSnapshot, ref string) (domain.Node, bool) {
	if ref == "" || snap == nil {
		return domain.Node{}, false
	}
	for _, n := range snap.Nodes {
		if n.Ref == ref {
			return n, true
		}
	}
	return domain.Node{}, false
}

// Actions returns a copy of the actions that reached the app (accepted or
// not), in order.
func (s *Surface) Actions() []policy.AuthorizedAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.actions)
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

// Crash makes every later call fail with surface.ErrCrashed and wakes every
// waiter, as a renderer crash does.
func (s *Surface) Crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crashed = true
	s.bump()
}

// WaitChange waits for a change after observation since. It returns nil at
// once when a change is already pending or since names no observation,
// ctx.Err() when ctx ends first, and an error wrapping surface.ErrCrashed
// when the surface crashes or closes.
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

// ChangedSince reports without waiting whether a change happened after
// observation since (true when since names no observation). It returns an
// error wrapping surface.ErrCrashed after Crash or Close.
func (s *Surface) ChangedSince(ctx context.Context, since uint64) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return false, err
	}
	v, ok := s.seen[since]
	return !ok || s.version > v, nil
}

// Screenshot is not available in the simulation: it returns
// surface.ErrNoFrame.
func (s *Surface) Screenshot(context.Context) ([]byte, error) {
	return nil, surface.ErrNoFrame
}

// Close marks the surface closed and wakes every waiter; it is idempotent.
func (s *Surface) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.bump()
	}
	return nil
}
