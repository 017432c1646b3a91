package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface"
)

// live is a parked session this process holds: its surface is used by one
// goroutine at a time (mu), by the viewer (observe, for masking and hit
// tests) and by the operator's dispatcher.
type live struct {
	p      runtime.Parked
	policy *policy.Engine

	mu     sync.Mutex
	viewer *runtime.Dispatcher
	human  *runtime.Dispatcher
	// geometry of the newest frame sent, to map a click on it to the page.
	scrollX, scrollY, scale float64

	// effects are the elevated and irreversible gestures operators sent
	// (effMu: the list reads them while a gesture may hold mu).
	effMu   sync.Mutex
	effects []HumanEffect

	castMu sync.Mutex
	subs   map[chan []byte]struct{}
	last   []byte // the newest masked frame sent, for a watcher who joins

	castStop context.CancelFunc
	closed   bool
	// onGesture is Config.OnGesture (record.go).
	onGesture func(ctx context.Context, g Gesture)
}

func newLive(p runtime.Parked) (*live, error) {
	pol, err := policy.New(policy.Config{Profile: policy.ProfileHuman, AllowedDomains: p.Domains, EntryOrigin: p.EntryOrigin})
	if err != nil {
		return nil, fmt.Errorf("console: human policy: %w", err)
	}
	// The viewer only observes: it acts as the parked automation's holder,
	// which may not act while the session is paused or held.
	viewer, err := runtime.New(runtime.Config{Surface: p.Surface, Policy: pol, Lease: p.Run.Lease, Holder: p.Holder,
		Redactor: p.Run.Redactor, Now: p.Run.Now, Logger: p.Run.Logger})
	if err != nil {
		return nil, fmt.Errorf("console: viewer: %w", err)
	}
	return &live{p: p, policy: pol, viewer: viewer, scale: 1}, nil
}

// close ends the screencast and closes every watcher's channel.
func (lv *live) close() {
	lv.castMu.Lock()
	defer lv.castMu.Unlock()
	lv.closed = true
	if lv.castStop != nil {
		lv.castStop()
		lv.castStop = nil
	}
	for ch := range lv.subs {
		close(ch)
	}
	lv.subs = nil
}

// observe returns the current snapshot. lv.mu is held.
func (lv *live) observe(ctx context.Context) (*domain.UiSnapshot, error) {
	return lv.viewer.Observe(ctx)
}

// maskFrame paints black every sensitive or secret node on f and returns
// the PNG. The snapshot the masks come from is taken after f was painted,
// straight from the surface (never a cached one), and the frame is sent
// only when the surface then reports that nothing changed since the paint
// (sc.Unchanged(f.Gen)): every pixel of it is described by that snapshot.
// Otherwise, or without a snapshot, it returns an error wrapping
// surface.ErrFrameStale and nothing is sent (fail closed).
func (lv *live) maskFrame(ctx context.Context, sc surface.Screencaster, f surface.Frame) ([]byte, error) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	raw, err := lv.p.Surface.Observe(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: observe for masking: %v", surface.ErrFrameStale, err)
	}
	red := lv.p.Run.Redactor
	// The raw tree keeps every node the normalized one folds away; each
	// box of either is masked.
	boxes := append(red.Boxes(raw), red.Boxes(perception.Normalize(raw))...)
	same, err := sc.Unchanged(ctx, f.Gen)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", surface.ErrFrameStale, err)
	}
	if !same {
		return nil, surface.ErrFrameStale
	}
	for i := range boxes {
		boxes[i].X -= f.ScrollX
		boxes[i].Y -= f.ScrollY
	}
	scale := f.Scale
	if scale <= 0 {
		scale = 1
	}
	png, err := redact.MaskPNG(f.PNG, boxes, scale)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", surface.ErrFrameStale, err)
	}
	lv.scrollX, lv.scrollY, lv.scale = f.ScrollX, f.ScrollY, scale
	return png, nil
}

// Input is one operator gesture, in the coordinates of the frame image.
type Input struct {
	// Kind is "click", "key", "dialog_accept" or "dialog_dismiss".
	Kind string  `json:"kind"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	Key  string  `json:"key"`
	// Epoch is the lease epoch the operator acts under.
	Epoch uint64 `json:"epoch"`
	// Confirm is the operator's explicit confirmation of this exact
	// gesture on an irreversible control.
	Confirm bool `json:"confirm"`
}

// Outcome is what an input did.
type Outcome struct {
	Dispatched bool        `json:"dispatched"`
	Risk       domain.Risk `json:"risk,omitempty"`
	Role       string      `json:"role,omitempty"`
	Name       string      `json:"name,omitempty"`
	// NeedsConfirm: the control is irreversible and the operator did not
	// confirm it; nothing was sent.
	NeedsConfirm bool   `json:"needs_confirm,omitempty"`
	Error        string `json:"error,omitempty"`
}

// errRefused marks an input policy or the lease refused.
var errRefused = errors.New("input refused")

// act turns an operator's gesture into one raw_input action: hit-tested
// to a node, classified by it, authorized under HUMAN, dispatched and
// recorded with actor human.
func (lv *live) act(ctx context.Context, operator string, in Input) (Outcome, error) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	holder := hitl.HumanPrefix + operator
	if err := lv.p.Run.Lease.Check(holder, in.Epoch); err != nil {
		return Outcome{Error: err.Error()}, fmt.Errorf("%w: %v", errRefused, err)
	}
	if lv.human == nil || lv.human.Holder() != holder || lv.human.Epoch() != in.Epoch {
		d, err := runtime.New(runtime.Config{Surface: lv.p.Surface, Policy: lv.policy, Lease: lv.p.Run.Lease, Holder: holder,
			Redactor: lv.p.Run.Redactor, Events: events(lv.p.Run, operator), Now: lv.p.Run.Now, Logger: lv.p.Run.Logger,
			Actor: domain.ActorHuman, SecretLog: lv.p.Run.SecretLog})
		if err != nil {
			return Outcome{Error: err.Error()}, fmt.Errorf("%w: %v", errRefused, err)
		}
		lv.human = d
	}
	snap, err := lv.human.Observe(ctx)
	if err != nil {
		return Outcome{Error: err.Error()}, fmt.Errorf("observe: %w", err)
	}
	a, node, err := lv.gesture(snap, in)
	if err != nil {
		return Outcome{Error: err.Error()}, fmt.Errorf("%w: %v", errRefused, err)
	}
	out := Outcome{Role: node.Role, Name: node.Name, Risk: domain.MaxRisk(policy.ActionRisk(snap, a, node), a.Risk)}
	opts := []runtime.ActOption{runtime.AtNode(node)}
	if in.Confirm {
		opts = append(opts, runtime.Consented(&policy.Consent{By: operator,
			Proposal: policy.Proposal{Role: node.Role, Name: node.Name, Risk: domain.RiskIrreversible}}))
	}
	if _, err := lv.human.Act(ctx, snap, a, "", opts...); err != nil {
		out.Error = err.Error()
		if domain.ErrorCode(err) == domain.CodeApprovalRequired {
			out.NeedsConfirm = true
			return out, nil
		}
		return out, fmt.Errorf("%w: %v", errRefused, err)
	}
	out.Dispatched = true
	if lv.onGesture != nil {
		lv.onGesture(ctx, Gesture{Session: lv.p.Waiting.SessionID, Principal: operator, Input: in, Action: a, Before: snap,
			Node: nodeIndex(snap, node), Risk: out.Risk})
	}
	if out.Risk.Rank() >= domain.RiskElevated.Rank() {
		lv.effMu.Lock()
		lv.effects = append(lv.effects, HumanEffect{Principal: operator, Role: node.Role, Name: lv.p.Run.Redactor.String(node.Name),
			Risk: out.Risk, Effect: domain.EffectSentUnconfirmed})
		lv.effMu.Unlock()
	}
	return out, nil
}

// HumanEffect is an elevated or irreversible gesture an operator sent in
// a parked session: it may have reached the application, whatever the
// run's own effects say.
type HumanEffect struct {
	Principal string        `json:"principal"`
	Role      string        `json:"role"`
	Name      string        `json:"name"`
	Risk      domain.Risk   `json:"risk"`
	Effect    domain.Effect `json:"effect"`
}

// humanEffects returns a copy of the gestures operators sent.
func (lv *live) humanEffects() []HumanEffect {
	lv.effMu.Lock()
	defer lv.effMu.Unlock()
	return append([]HumanEffect(nil), lv.effects...)
}

// plan returns the run's resume plan on the screen now, and false when
// the run gives none.
func (lv *live) plan(ctx context.Context) (runtime.ResumePlan, bool, error) {
	if lv.p.Plan == nil {
		return runtime.ResumePlan{}, false, nil
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	p, err := lv.p.Plan(ctx)
	if err != nil {
		return p, true, err
	}
	return p, true, nil
}

// events is the run's evidence as the principal's dispatcher writes it:
// every event names the principal (see byPrincipal).
func events(r *runtime.Run, principal string) runtime.EventSink {
	if r.Evidence == nil {
		return nil
	}
	return byPrincipal{sink: r.Evidence, principal: principal}
}

// gesture builds the raw_input action of in and finds its node: for a
// click the node under the pointer, for a key the focused node, for a
// dialog answer the dialog's button. A key or a dialog answer carries the
// risk of what it sets off as its declared risk (accepting a dialog is
// irreversible: nobody knows what it confirms).
func (lv *live) gesture(snap *domain.UiSnapshot, in Input) (domain.Action, *domain.Node, error) {
	a := domain.Action{Type: domain.ActRawInput, StepID: "operator"}
	switch in.Kind {
	case "click":
		if snap.Dialog != nil {
			return a, nil, errors.New("a dialog is open: answer it first")
		}
		a.X, a.Y = in.X/lv.scale+lv.scrollX, in.Y/lv.scale+lv.scrollY
		n := HitTest(snap, a.X, a.Y)
		if n == nil {
			return a, nil, fmt.Errorf("nothing at (%.0f, %.0f)", a.X, a.Y)
		}
		return a, n, nil
	case "key":
		if in.Key == "" {
			return a, nil, errors.New("key: no key")
		}
		a.Key = in.Key
		n := focused(snap)
		if n == nil {
			return a, nil, errors.New("key: nothing has focus")
		}
		a.Risk = policy.ImpliedRisk(snap, domain.Action{Type: domain.ActPressKey, Key: in.Key}, n)
		return a, n, nil
	case "dialog_accept", "dialog_dismiss":
		if snap.Dialog == nil {
			return a, nil, errors.New("no dialog is open")
		}
		name, key := "OK", "Enter"
		if in.Kind == "dialog_dismiss" {
			name, key = "Cancel", "Escape"
		} else {
			a.Risk = domain.RiskIrreversible
		}
		a.Key = key
		for i := range snap.Nodes {
			if n := &snap.Nodes[i]; n.Role == "button" && n.Name == name && inDialog(snap, n) {
				return a, n, nil
			}
		}
		return a, nil, fmt.Errorf("the dialog has no %s button", name)
	}
	return a, nil, fmt.Errorf("unknown input kind %q", in.Kind)
}

func inDialog(s *domain.UiSnapshot, n *domain.Node) bool {
	p := n.Parent
	for range len(s.Nodes) {
		if p < 0 || p >= len(s.Nodes) {
			return false
		}
		if r := s.Nodes[p].Role; r == "alertdialog" || r == "dialog" {
			return true
		}
		p = s.Nodes[p].Parent
	}
	return false
}

// focused returns the innermost focused node: the last in document order,
// so a field inside a frame wins over the frame's document.
func focused(s *domain.UiSnapshot) *domain.Node {
	var out *domain.Node
	for i := range s.Nodes {
		if s.Nodes[i].States.Focused && !s.Nodes[i].States.Hidden {
			out = &s.Nodes[i]
		}
	}
	return out
}

// HitTest returns the node under the page point (x, y): of the visible
// nodes whose box holds it, the smallest, then the deepest; nil when none.
func HitTest(s *domain.UiSnapshot, x, y float64) *domain.Node {
	var best *domain.Node
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.States.Hidden || n.Bounds.Empty() || !n.Bounds.Contains(x, y) {
			continue
		}
		area, bestArea := n.Bounds.W*n.Bounds.H, 0.0
		if best != nil {
			bestArea = best.Bounds.W * best.Bounds.H
		}
		if best == nil || area < bestArea || (area == bestArea && n.Depth > best.Depth) {
			best = n
		}
	}
	return best
}

// subscribe returns a channel of masked frames of the session, shared by
// every watcher: one screencast runs while anyone watches (two casts of one
// page would stop each other). A slow watcher gets the newest frame, never
// a queue. The channel closes when the session leaves this console.
func (lv *live) subscribe(logger *slog.Logger) (<-chan []byte, func()) {
	ch := make(chan []byte, 1)
	lv.castMu.Lock()
	defer lv.castMu.Unlock()
	if lv.closed {
		close(ch)
		return ch, func() {}
	}
	if lv.subs == nil {
		lv.subs = map[chan []byte]struct{}{}
	}
	lv.subs[ch] = struct{}{}
	// A still page paints no new frame: a watcher who joins (a second tab,
	// a reconnect) gets the newest one sent, masked like every other.
	if lv.last != nil {
		ch <- lv.last
	}
	if lv.castStop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		lv.castStop = cancel
		go lv.castLoop(ctx, logger)
	}
	return ch, func() {
		lv.castMu.Lock()
		defer lv.castMu.Unlock()
		if _, ok := lv.subs[ch]; !ok {
			return
		}
		delete(lv.subs, ch)
		if len(lv.subs) == 0 && lv.castStop != nil {
			lv.castStop()
			lv.castStop = nil
		}
	}
}

// castLoop sends the session's frames to every watcher. A frame goes out
// only masked from a snapshot taken after its paint with no change in
// between (maskFrame); any other frame is dropped and the watchers keep
// the last one sent, until the page holds still long enough for a frame
// to pass. A page that never holds still (a running animation) sends no
// new frame: the price of never showing pixels no snapshot describes.
func (lv *live) castLoop(ctx context.Context, logger *slog.Logger) {
	sc := lv.p.Surface.(surface.Screencaster)
	err := sc.Screencast(ctx, func(f surface.Frame) error {
		png, err := lv.maskFrame(ctx, sc, f)
		if err != nil {
			if ctx.Err() == nil {
				logger.DebugContext(ctx, "frame not sent", slog.Any("error", err))
			}
			return surface.ErrFrameStale
		}
		lv.castMu.Lock()
		defer lv.castMu.Unlock()
		lv.last = png
		for ch := range lv.subs {
			select {
			case <-ch: // drop the older frame the watcher did not take
			default:
			}
			ch <- png
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		logger.WarnContext(ctx, "screencast ended", slog.Any("error", err))
	}
}
