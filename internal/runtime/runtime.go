// Package runtime owns the dispatcher, the one path from an action to a
// surface, and the run builder (Base, RunConfig, Run) that replay,
// discovery and later workers and the console build their runs with. The
// dispatcher observes (normalising the snapshot and checking where the
// surface landed), checks the lease and epoch, resolves the target, asks
// policy to authorize, binds secrets at the last moment, dispatches, and
// records a typed evidence event; after a step it takes the step's
// screenshot, masked by the surface before encoding (MaskedScreenshot,
// Run.StepScreenshot). It is the only caller of Surface.Dispatch (DESIGN
// invariant 2).
//
// runtime never decides whether an action is allowed (policy does, from
// what the Request carries), never retries or recovers (the engines do),
// and never lets a resolved secret out of the dispatch that bound it.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/targeting"
)

// SecretSource resolves a secret reference to its value.
type SecretSource interface {
	Secret(ref string) (string, error)
}

// SecretLog remembers the secret values resolved during one run (across its
// sub-runs), so the engine can refuse an extraction that would read one back.
// Safe for concurrent use.
type SecretLog struct {
	mu   sync.Mutex
	vals []string
}

func (l *SecretLog) add(v string) {
	if l == nil || v == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.vals = append(l.vals, v)
}

// Reveals reports whether text contains a resolved secret value, whole
// or, for a value of 12 or more characters, any 12-character run of it
// compared case- and whitespace-normalised (redact.Reveals).
func (l *SecretLog) Reveals(text string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return redact.Reveals(text, l.vals...)
}

// EventSink receives evidence events.
type EventSink interface {
	Append(e evidence.Event) error
}

// Dispatcher drives one surface for one run. Not safe for concurrent use: a
// run owns its dispatcher.
type Dispatcher struct {
	surface  surface.Surface
	policy   *policy.Engine
	lease    *hitl.Lease
	holder   string
	epoch    uint64
	secrets  SecretSource
	redactor *redact.Redactor
	events   EventSink
	now      func() time.Time
	logger   *slog.Logger
	actor    domain.Actor
	seen     *SecretLog

	// beforeShot, when set, pictures the screen an elevated or irreversible action
	// was authorized on, just before it is sent (Config.BeforeIrreversible).
	beforeShot func(ctx context.Context, d *Dispatcher, step string) string

	dispatches int
	// last is the newest normalised snapshot; it is served again while the
	// surface reports no change and nothing was dispatched since.
	last *domain.UiSnapshot
}

// Config configures a Dispatcher.
type Config struct {
	Surface  surface.Surface
	Policy   *policy.Engine
	Lease    *hitl.Lease
	Holder   string
	Secrets  SecretSource
	Redactor *redact.Redactor
	Events   EventSink
	Now      func() time.Time
	Logger   *slog.Logger
	Actor    domain.Actor
	// Secrets resolved by this dispatcher are added to SecretLog.
	SecretLog *SecretLog
	// BeforeIrreversible, when set, is called once an elevated or
	// irreversible action is authorized, just before it is sent: it writes the masked
	// screenshot of the screen the action was authorized on and returns
	// its bundle-relative path, which the action's event records as
	// screenshot_before ("" when none was taken). Run.Dispatcher sets it.
	BeforeIrreversible func(ctx context.Context, d *Dispatcher, step string) string
}

// New returns a Dispatcher acting as cfg.Holder at the lease's current epoch.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Surface == nil || cfg.Policy == nil || cfg.Lease == nil || cfg.Redactor == nil {
		return nil, errors.New("runtime: surface, policy, lease and redactor are required")
	}
	if cfg.Holder == "" {
		return nil, errors.New("runtime: the lease holder to act as is required")
	}
	holder, epoch := cfg.Lease.Holder()
	if cfg.Holder != holder {
		return nil, domain.Errorf(domain.CodeLeaseLost, "session is held by %q", holder)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Actor == "" {
		cfg.Actor = domain.ActorAutomation
	}
	return &Dispatcher{
		surface: cfg.Surface, policy: cfg.Policy, lease: cfg.Lease, holder: holder, epoch: epoch,
		secrets: cfg.Secrets, redactor: cfg.Redactor, events: cfg.Events, now: cfg.Now,
		logger: cfg.Logger, actor: cfg.Actor, seen: cfg.SecretLog, beforeShot: cfg.BeforeIrreversible,
	}, nil
}

// Epoch returns the lease epoch this dispatcher acts under.
func (d *Dispatcher) Epoch() uint64 { return d.epoch }

// Holder returns the lease holder this dispatcher acts as.
func (d *Dispatcher) Holder() string { return d.holder }

// Rebind adopts the lease's current epoch after a hand-off came back to
// this dispatcher's holder (hitl: RESUMING → RUNNING). Until it is called,
// every action is refused as authorized under the old epoch. It returns
// LEASE_LOST when the holder does not hold the lease or may not act.
func (d *Dispatcher) Rebind() (uint64, error) {
	_, epoch := d.lease.Holder()
	if err := d.lease.Check(d.holder, epoch); err != nil {
		return d.epoch, err
	}
	d.epoch = epoch
	d.last = nil
	return epoch, nil
}

// Dispatches returns how many actions reached the surface.
func (d *Dispatcher) Dispatches() int { return d.dispatches }

// WaitChange waits for the surface to change after observation since (see
// surface.Surface). A surface failure is wrapped with its failure code.
func (d *Dispatcher) WaitChange(ctx context.Context, since uint64) error {
	err := d.surface.WaitChange(ctx, since)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return domain.Wrap(surface.FailureCode(err), err, "wait for a change")
}

// Observe reads and normalises the current snapshot, then applies the
// domain allowlist to every frame's landed URL. When the surface reports no
// change since the last observation and no action was dispatched since, the
// last snapshot is returned again (callers must not modify snapshots).
func (d *Dispatcher) Observe(ctx context.Context) (*domain.UiSnapshot, error) {
	if d.last != nil {
		if changed, err := d.surface.ChangedSince(ctx, d.last.Seq); err == nil && !changed && ctx.Err() == nil {
			return d.last, nil
		}
		d.last = nil
	}
	raw, err := d.surface.Observe(ctx)
	if err != nil {
		return nil, domain.Wrap(surface.FailureCode(err), err, "observe")
	}
	snap := perception.Normalize(raw)
	if err := d.checkLanded(snap); err != nil {
		d.emit("", evidence.LandingRefused{URL: snap.URL, Error: err.Error()})
		return snap, err
	}
	d.last = snap
	return snap, nil
}

func (d *Dispatcher) checkLanded(s *domain.UiSnapshot) error {
	if s.URL != "" {
		if err := d.policy.CheckURL(s.URL); err != nil {
			return err
		}
	}
	for _, f := range s.Frames {
		if f.URL == "" || f.URL == "about:blank" || f.URL == "about:srcdoc" {
			continue
		}
		if err := d.policy.CheckURL(f.URL); err != nil {
			return err
		}
	}
	return nil
}

// Result is what Act did.
type Result struct {
	Resolution *targeting.Resolution
	Node       *domain.Node
	Surface    surface.Result
	Risk       domain.Risk
}

// ActOption adjusts one Act call.
type ActOption func(*policy.Request)

// Proposed hands policy the action as a model proposed it, so the
// autonomy level applies (DISCOVERY).
func Proposed(p policy.Proposal) ActOption { return func(r *policy.Request) { r.Proposal = &p } }

// Consented hands policy a person's consent to exactly this action.
func Consented(c *policy.Consent) ActOption { return func(r *policy.Request) { r.Consent = c } }

// AtNode hands policy the node a raw input was hit-tested to (the node
// under the pointer, or the focused node for a key): policy classifies the
// input by it and the evidence event names it.
func AtNode(n *domain.Node) ActOption { return func(r *policy.Request) { r.Node = n } }

// Granted hands policy the run's grants; policy spends a use when a grant
// is what allows the action.
func Granted(g *policy.Grants) ActOption { return func(r *policy.Request) { r.Grants = g } }

// Act resolves a.Target on snap (when it has one), authorizes and dispatches
// the action. text is the resolved non-secret value for type and select.
func (d *Dispatcher) Act(ctx context.Context, snap *domain.UiSnapshot, a domain.Action, text string, opts ...ActOption) (Result, error) {
	var res Result
	a.Actor = d.actor
	if err := d.lease.Check(d.holder, d.epoch); err != nil {
		d.emit(a.StepID, evidence.DispatchRefused{Reason: err.Error()})
		return res, err
	}
	if a.Target != nil {
		r, err := targeting.Resolve(snap, *a.Target)
		if err != nil {
			d.emit(a.StepID, evidence.TargetUnresolved{Error: err.Error()})
			return res, err
		}
		res.Resolution = &r
		n := snap.Nodes[r.Node]
		res.Node = &n
	}
	req := policy.Request{Action: a, Node: res.Node, Text: text, Epoch: d.epoch, Holder: d.holder, Snapshot: snap}
	for _, o := range opts {
		o(&req)
	}
	if res.Node == nil && req.Node != nil {
		res.Node = req.Node // a raw input's node, hit-tested by its caller (AtNode)
	}
	auth, err := d.policy.Authorize(req)
	if err != nil {
		d.emit(a.StepID, evidence.PolicyDenied{Action: a.Type, Error: err.Error()})
		return res, err
	}
	res.Risk = auth.Risk()
	if auth.NeedsSecret() {
		if d.secrets == nil {
			return res, domain.Errorf(domain.CodeSecretUnavailable, "no secret source for %s", a.Value)
		}
		v, err := d.secrets.Secret(auth.SecretRef())
		if err != nil {
			return res, domain.Wrap(domain.CodeSecretUnavailable, err, "secret "+auth.SecretRef())
		}
		d.redactor.RegisterLiteral(v)
		d.seen.add(v)
		if auth, err = auth.BindSecret(v); err != nil {
			return res, fmt.Errorf("bind secret: %w", err)
		}
	}
	// The lease may have moved while we resolved: check again, last thing.
	if err := d.lease.Check(auth.Holder(), auth.Epoch()); err != nil {
		d.emit(a.StepID, evidence.DispatchRefused{Reason: err.Error()})
		return res, err
	}
	var before string
	if auth.Risk().Rank() >= domain.RiskElevated.Rank() && d.beforeShot != nil {
		// The screen the elevated or irreversible action was authorized
		// on, masked, pictured before it is sent: its event names the
		// picture.
		before = d.beforeShot(ctx, d, a.StepID)
	}
	start := d.now()
	d.last = nil
	sr, err := d.surface.Dispatch(ctx, auth)
	d.dispatches++
	ev := evidence.ActionDispatched{Action: a.Type, Risk: auth.Risk(), DurationMS: d.now().Sub(start).Milliseconds(),
		Epoch: d.epoch, URL: a.URL, ScreenshotBefore: before}
	if res.Node != nil {
		ev.Role, ev.Name, ev.Frame = res.Node.Role, res.Node.Name, res.Node.Frame
	}
	if res.Resolution != nil {
		ev.Strategy = res.Resolution.Strategy
	}
	if a.Value != nil {
		ev.Value = a.Value.String()
	}
	if err != nil {
		if policy.IsDenied(err) {
			// The surface found the action reaches a control its
			// authorization does not cover (AuthorizedAction.Admits) and
			// sent nothing: a policy refusal, recorded as one.
			d.emit(a.StepID, evidence.PolicyDenied{Action: a.Type, Error: err.Error()})
			return res, domain.Wrap(domain.CodePolicyDenied, err, "dispatch "+string(a.Type))
		}
		d.emit(a.StepID, evidence.DispatchFailed{ActionDispatched: ev, Error: err.Error()})
		return res, domain.Wrap(surface.FailureCode(err), err, "dispatch "+string(a.Type))
	}
	res.Surface = sr
	d.emit(a.StepID, ev)
	return res, nil
}

func (d *Dispatcher) emit(step string, p evidence.Payload) {
	if d.events == nil {
		return
	}
	if err := d.events.Append(evidence.NewEvent(d.now(), d.actor, step, p)); err != nil {
		d.logger.Warn("evidence event dropped", slog.String("type", p.EventType()), slog.Any("error", err))
	}
}

// Emit records an engine event (step finished, recovery, outcome) by the
// dispatcher's actor.
func (d *Dispatcher) Emit(step string, p evidence.Payload) { d.emit(step, p) }
