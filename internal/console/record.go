package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/targeting"
)

// Gesture is one operator input the console dispatched, as a recording
// (cua record) sees it: the snapshot the input was hit-tested on and the
// node it reached. It is handed to [Config.OnGesture] in memory only; a
// key typed into a password field is in Input.Key, so a hook must never
// write it down.
type Gesture struct {
	Session   string
	Principal string
	Input     Input
	Action    domain.Action
	// Before is the snapshot the gesture was hit-tested on; Node indexes
	// its node (the one under the pointer, or the focused one for a key).
	Before *domain.UiSnapshot
	Node   int
	Risk   domain.Risk
}

// nodeIndex returns the index of n in s.Nodes, or -1.
func nodeIndex(s *domain.UiSnapshot, n *domain.Node) int {
	for i := range s.Nodes {
		if &s.Nodes[i] == n {
			return i
		}
	}
	return -1
}

// Locate hit-tests a point of the session's live picture (frame image
// coordinates, as the page sends a click) without dispatching anything:
// the snapshot now and the index of the node under the point. A recording
// page marks outputs and outcomes with it.
func (s *Server) Locate(ctx context.Context, session string, x, y float64) (*domain.UiSnapshot, int, error) {
	lv, ok := s.session(session)
	if !ok {
		return nil, -1, errors.New("no such live session")
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	snap, err := lv.observe(ctx)
	if err != nil {
		return nil, -1, fmt.Errorf("observe: %w", err)
	}
	px, py := x/lv.scale+lv.scrollX, y/lv.scale+lv.scrollY
	n := HitTest(snap, px, py)
	if n == nil {
		return snap, -1, fmt.Errorf("nothing at (%.0f, %.0f)", px, py)
	}
	return snap, nodeIndex(snap, n), nil
}

// Snapshot observes the session's screen now, while nobody acts on it.
func (s *Server) Snapshot(ctx context.Context, session string) (*domain.UiSnapshot, error) {
	lv, ok := s.session(session)
	if !ok {
		return nil, errors.New("no such live session")
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return lv.observe(ctx)
}

// HandleGuarded mounts a state-changing handler behind the console's gate
// (same Origin, signed in, CSRF token); op is the signed-in principal.
// Call it before Open.
func (s *Server) HandleGuarded(pattern string, h func(w http.ResponseWriter, r *http.Request, op string)) {
	s.mux.HandleFunc(pattern, s.guarded(h))
}

// HandlePage mounts a GET handler for signed-in browsers only (others go
// to the sign-in page); csrf is the browser's token for its API calls.
// Call it before Open.
func (s *Server) HandlePage(pattern string, h func(w http.ResponseWriter, r *http.Request, csrf, op string)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		si, ok := s.signedIn(r, false)
		if !ok {
			s.signinPage(w, http.StatusOK, "")
			return
		}
		h(w, r, si.csrf, si.who.Name)
	})
}

// Where is where the node d resolves to shows on the session's live
// picture (frame image coordinates, as the page sends a click): a point
// inside its first line. A recording page's "find on the picture" uses it, so a person
// (or a scripted one) can reach a control by its role and name.
func (s *Server) Where(ctx context.Context, session string, d domain.TargetDescriptor) (float64, float64, error) {
	lv, ok := s.session(session)
	if !ok {
		return 0, 0, errors.New("no such live session")
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	snap, err := lv.observe(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("observe: %w", err)
	}
	res, err := targeting.Resolve(snap, d)
	if err != nil {
		return 0, 0, err
	}
	// A point well inside the node's first line: the centre of a link
	// that wraps onto two lines may fall on no glyph of it.
	b := snap.Nodes[res.Node].Bounds
	x, y := b.X+min(b.W/2, 8), b.Y+min(b.H/2, 8)
	return (x - lv.scrollX) * lv.scale, (y - lv.scrollY) * lv.scale, nil
}
