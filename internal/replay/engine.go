package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface"
)

// DefaultStepWait bounds how long a step without an explicit wait waits
// for its screen.
const DefaultStepWait = 5 * time.Second

// Options configure one run.
type Options struct {
	Capability *capability.Loaded
	Library    Library
	Inputs     map[string]string
	BaseURL    string
	Surface    surface.Surface
	Secrets    runtime.SecretSource
	Redactor   *redact.Redactor
	// DataDir roots the evidence tree; empty writes no evidence unless
	// Evidence is set.
	DataDir string
	// Evidence is the caller's evidence sink (evidence.Open), injected; it
	// wins over DataDir, and the caller closes it after Run returns (Run
	// writes the record and syncs it).
	Evidence          *evidence.Bundle
	AllowIrreversible bool
	Approval          *policy.Approval
	// ReleasedGates lists the gated step ids a reviewer released.
	ReleasedGates []string
	Lease         *hitl.Lease
	Holder        string
	RunID         string
	Now           func() time.Time
	Logger        *slog.Logger
	// StepWait overrides DefaultStepWait.
	StepWait time.Duration
	// OnStep, when set, is called after each step is recorded (a
	// prerequisite's and a remedy's too), with its result before the record
	// is redacted: a progress report that must return quickly, never a
	// decision.
	OnStep func(domain.StepResult)
	// Park, when set, parks an escalation (NEEDS_HUMAN) of a step instead
	// of ending the run, for up to ParkTimeout (DefaultParkTimeout when
	// zero); the run's time limit grows by ParkTimeout.
	Park        runtime.Parker
	ParkTimeout time.Duration
	// Warm says the session was used by an earlier run of this worker: a
	// capability with reentry may start on the screen it shows (see
	// [domain.Reentry]) instead of navigating to its entrypoint. A run on
	// a cold session never reenters.
	Warm bool
	// EvidenceLevel raises the capability's evidence level for this run
	// (full), or lowers it to none for a read-only capability that does
	// not seal full; "" keeps the capability's (evidence.go).
	EvidenceLevel domain.EvidenceLevel
	// Proposer, when set, is told about a top-level step halted on its
	// target (heal.go); the run ends the same either way.
	Proposer Proposer
}

// Run executes the capability and returns its record. The error is non-nil
// only when the run could not be recorded (evidence directory unwritable);
// every run outcome, including failures, is in the record.
func Run(ctx context.Context, o Options) (*domain.RunRecord, error) {
	if o.StepWait == 0 {
		o.StepWait = DefaultStepWait
	}
	rt, err := runtime.NewRun(runtime.RunConfig{
		Base: runtime.Base{Logger: o.Logger, Now: o.Now}, ID: o.RunID, BaseURL: o.BaseURL, Actor: domain.ActorAutomation,
		Holder: o.Holder, Lease: o.Lease, Redactor: o.Redactor, Secrets: o.Secrets, Evidence: o.Evidence, DataDir: o.DataDir,
		EvidenceLevel: evidenceLevel(o.Capability.Capability, o.EvidenceLevel),
	})
	if err != nil {
		return nil, err
	}
	o.Now, o.Logger, o.Redactor, o.Holder, o.Lease = rt.Now, rt.Logger, rt.Redactor, rt.Holder, rt.Lease
	c := o.Capability.Capability
	o.Redactor.NotLabels(ownNames(c)...)
	start := o.Now()
	rec := &domain.RunRecord{
		SchemaVersion: 1, RunID: o.RunID, Capability: c.Ref(), ContentHash: o.Capability.Hash,
		Status: domain.StatusRunning, StartedAt: start.UTC().Format(time.RFC3339Nano),
		StrategyMix: map[domain.Strategy]int{}, Steps: []domain.StepResult{}, BaseURL: o.BaseURL,
	}
	r := &run{o: o, c: c, rec: rec, rt: rt, start: start, outputs: map[string]any{}, attempts: map[string]int{}, eff: &effectLog{}}
	for i := range c.Steps {
		r.eff.declare(c.Steps[i].ID, stepRisk(&c.Steps[i]))
	}
	r.finishWith(r.execute(ctx))

	rec.FinishedAt = o.Now().UTC().Format(time.RFC3339Nano)
	rec.DurationMS = o.Now().Sub(start).Milliseconds()
	if r.resolutions > 0 {
		rec.DriftScore = float64(r.drifted) / float64(r.resolutions)
	}
	// The record leaves the engine redacted (invariant 6): callers print
	// and store it as it is.
	out := evidence.RedactRecord(r.sinkRecord(), o.Redactor)
	if rt.Evidence != nil {
		r.endEvidence(ctx)
		r.emit("", evidence.RunFinished{Status: rec.Status, FailureCode: rec.FailureCode, Outcome: rec.Outcome})
		err := rt.Evidence.WriteRecord(out)
		if err == nil {
			err = r.writeReceipt(out)
		}
		if err == nil {
			err = rt.Evidence.Sync()
		}
		if cerr := rt.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// end is how a run (or sub-run) stops.
type end struct {
	status  domain.RunStatus
	code    domain.FailureCode
	outcome *domain.Outcome
	msg     string
	// recoverWith, when set, is not an end: a failed dispatch was explained
	// by this recovery rule, which the step loop applies.
	recoverWith *domain.RecoveryRule
	// handBack marks the end of a capability run in place (a prerequisite
	// or a run_capability remedy) on a screen it did not recognise, with no
	// effect left unconfirmed: its caller judges that screen with its own
	// rules before the failure ends anything (handback.go).
	handBack bool
}

type run struct {
	o     Options
	c     *domain.Capability
	rec   *domain.RunRecord
	rt    *runtime.Run
	disp  *runtime.Dispatcher
	start time.Time

	inputs   map[string]any
	outputs  map[string]any
	attempts map[string]int

	resolutions, drifted int
	stepsRun             int
	subDispatches        int
	parent               *run
	pol                  *policy.Engine

	// eff is the run's effect log, shared with its sub-runs.
	eff *effectLog
	// sent marks the steps of this (sub-)run that acted and whose effect
	// was not yet confirmed; they are checked before running again.
	sent []bool
	// recovered lists the recovery rules applied (top run only).
	recovered []string
	// lastSnap is the newest snapshot classified (top run only), for the
	// app's own error text in a failure message.
	lastSnap *domain.UiSnapshot
	// refused: a check refused the run before its first dispatch.
	refused bool
}

// top returns the outermost run.
func (r *run) top() *run {
	for r.parent != nil {
		r = r.parent
	}
	return r
}

// noteSnapshot remembers the newest classified snapshot.
func (r *run) noteSnapshot(s *domain.UiSnapshot) {
	if s != nil {
		r.top().lastSnap = s
	}
}

// emit records an engine event; step is empty for a run-level event.
func (r *run) emit(step string, p evidence.Payload) { r.rt.Emit(step, p) }

func failEnd(code domain.FailureCode, format string, args ...any) *end {
	return &end{status: domain.StatusFailed, code: code, msg: fmt.Sprintf(format, args...)}
}

func errEnd(err error) *end {
	msg := err.Error()
	if de, ok := err.(*domain.Error); ok && de.Message != "" && de.Err == nil {
		msg = de.Message
	}
	return &end{status: domain.StatusFailed, code: domain.ErrorCode(err), msg: msg}
}

func (r *run) finishWith(e *end) {
	rec := r.rec
	if e == nil {
		e = &end{status: domain.StatusSuccess}
	}
	status := e.status
	if status == domain.StatusFailed && r.c.Escalation.Escalates(e.code) {
		status = domain.StatusNeedsHuman
	}
	// A declared result read after the effects confirms them: the
	// checkpoint of a successful run, or a business outcome.
	if (status == domain.StatusSuccess && r.c.Checkpoint != nil) || status == domain.StatusBusinessOutcome {
		r.eff.confirmAll()
	}
	msg := r.explainEnd(status, e.msg)
	if warn := r.eff.warning(); warn != "" {
		// Effects are never hidden (invariant 13): a run that may have
		// moved money says so first, and is handed to a human.
		if status == domain.StatusFailed {
			status = domain.StatusNeedsHuman
		}
		if msg == "" {
			msg = warn
		} else {
			msg = warn + ". " + msg
		}
	}
	rec.Status = status
	rec.ExitCode = status.ExitCode()
	rec.FailureCode = e.code
	rec.Message = msg
	rec.Effects = r.eff.summary()
	if e.outcome != nil {
		rec.Outcome = e.outcome.Code
		rec.Returns = e.outcome.Returns
	}
	if status == domain.StatusSuccess && len(r.outputs) > 0 {
		rec.Outputs = r.outputs
	}
	if r.disp != nil {
		rec.DispatchCount = r.disp.Dispatches() + r.subDispatches
	}
}

// explainEnd adds to a failure's message what a person needs first: which
// recoveries ran before it, and the app's own error text on screen.
func (r *run) explainEnd(status domain.RunStatus, msg string) string {
	if status != domain.StatusFailed && status != domain.StatusNeedsHuman {
		return msg
	}
	if len(r.recovered) > 0 {
		msg = fmt.Sprintf("%s (after recovering with %s)", msg, strings.Join(slices.Compact(slices.Clone(r.recovered)), ", "))
	}
	if alerts := appAlerts(r.lastSnap); alerts != "" {
		msg = fmt.Sprintf("%s; the application says: %s", msg, alerts)
	}
	return msg
}

// appAlerts quotes the visible alert texts of a snapshot.
func appAlerts(s *domain.UiSnapshot) string {
	if s == nil {
		return ""
	}
	var out []string
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Role != "alert" || n.States.Hidden {
			continue
		}
		text := n.Name
		if text == "" {
			text = alertText(s, n, 0)
		}
		if text = strings.Join(strings.Fields(text), " "); text != "" && !slices.Contains(out, strconv.Quote(text)) {
			out = append(out, strconv.Quote(text))
		}
	}
	return strings.Join(out, ", ")
}

// alertText is the text under an alert node, bounded in depth.
func alertText(s *domain.UiSnapshot, n *domain.Node, depth int) string {
	if depth > 8 {
		return ""
	}
	var parts []string
	for _, c := range n.Children {
		if c < 0 || c >= len(s.Nodes) {
			continue
		}
		ch := &s.Nodes[c]
		if ch.Name != "" && (ch.Role == "text" || ch.Role == "StaticText" || len(ch.Children) == 0) {
			parts = append(parts, ch.Name)
			continue
		}
		parts = append(parts, alertText(s, ch, depth+1))
	}
	return strings.Join(parts, " ")
}

// sinkRecord is the record as written to disk: sensitive inputs and outputs
// masked by shape (the redactor then removes registered literals).
func (r *run) sinkRecord() *domain.RunRecord {
	cp := *r.rec
	cp.Inputs = map[string]any{}
	for k, v := range r.inputs {
		if spec := r.c.Input(k); spec != nil && spec.Sensitive {
			v = redact.MaskShape(fmt.Sprint(v))
		}
		cp.Inputs[k] = v
	}
	if r.rec.Outputs != nil {
		cp.Outputs = map[string]any{}
		for k, v := range r.rec.Outputs {
			if spec := r.c.Output(k); spec != nil && spec.Sensitive {
				v = redact.MaskShape(fmt.Sprint(v))
			}
			cp.Outputs[k] = v
		}
	}
	return &cp
}

func (r *run) execute(ctx context.Context) *end {
	inputs, err := capability.BindInputs(r.c, r.o.Inputs)
	if err != nil {
		// Refused runs have a bundle like any other (invariant 18): what
		// ran, what it was given (a sensitive input as a keyed digest),
		// and what refused it.
		given := make(map[string]any, len(r.o.Inputs))
		for k, v := range r.o.Inputs {
			given[k] = v
		}
		r.started(given)
		return r.refuse(evidence.CheckInputs, errEnd(err))
	}
	r.inputs = inputs
	r.started(r.inputs)
	if e := r.refuseEvidence(); e != nil {
		return e
	}
	// Input placeholders in targets and predicates ("Member
	// {input.member_id}") are bound once: targeting never sees inputs.
	bound, err := bindRun(r.c, inputs)
	if err != nil {
		return r.refuse(evidence.CheckInputs, failEnd(domain.CodeInputInvalid, "%v", err))
	}
	r.c = bound
	base, err := url.Parse(r.o.BaseURL)
	if err != nil || base.Host == "" || (base.Scheme != "http" && base.Scheme != "https") {
		return r.refuse(evidence.CheckBaseURL, failEnd(domain.CodeInputInvalid, "base URL %q is not an http(s) URL", r.o.BaseURL))
	}
	// Every capability this one may call is resolved, and its pin checked,
	// before anything is sent.
	if r.o.Library != nil || len(r.c.Prerequisites) > 0 || usesRunCapability(r.c) {
		if err := Preflight(r.o.Capability, r.o.Library); err != nil {
			return r.refuse(evidence.CheckCalledCapabilities, errEnd(err))
		}
	}
	if r.o.Surface == nil {
		return failEnd(domain.CodeInternal, "no surface")
	}
	disp, err := r.dispatcher(r.c)
	if err != nil {
		return r.refuse(evidence.CheckPolicy, errEnd(err))
	}
	r.disp = disp
	if e := r.refuseUnauthorizable(); e != nil {
		return r.refuse(evidence.CheckIrreversible, e)
	}

	limit := time.Duration(r.c.Policy.MaxDurationMS) * time.Millisecond
	if r.o.Park != nil {
		limit += r.parkTimeout()
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	// A capability with effect contracts reads them before its first
	// step (readback.go), so it always starts at its entrypoint.
	from, reads := -1, []contractRead(nil)
	if len(r.c.Contracts()) == 0 {
		from = r.reenter(ctx)
	}
	if from < 0 {
		if e := r.enter(ctx); e != nil {
			return e
		}
		var e *end
		if reads, e = r.preRead(ctx); e != nil {
			return e
		}
		from = 0
	}
	return r.postRead(ctx, reads, r.steps(ctx, from))
}

// started registers the sensitive inputs with the redactor and emits
// run_started: the capability, its content hash and the inputs (a
// sensitive one as a keyed digest), so the signed log says what the run
// was given (invariant 18).
func (r *run) started(inputs map[string]any) {
	var sensitive []string
	for name, v := range inputs {
		if spec := r.c.Input(name); spec != nil && spec.Sensitive {
			r.o.Redactor.RegisterLiteral(fmt.Sprint(v))
			sensitive = append(sensitive, name)
		}
	}
	r.emit("", evidence.RunStarted{Capability: r.c.Ref(), ContentHash: r.o.Capability.Hash, BaseURL: r.o.BaseURL,
		Inputs: inputs, Sensitive: sensitive, Evidence: r.rt.EvidenceLevel()})
}

// refuse records that check refused the run before its first dispatch.
func (r *run) refuse(check string, e *end) *end {
	r.refused = true
	r.emit("", evidence.RunRefused{Code: e.code, Check: check, Reason: e.msg})
	return e
}

// refuseUnauthorizable refuses, before the first dispatch, a run whose
// irreversible step could never be authorized (no opt-in, no approval of
// this content) and that no unreleased gate stops before it: such a run
// would do everything up to the irreversible step for nothing.
func (r *run) refuseUnauthorizable() *end {
	gated := false
	for i := range r.c.Steps {
		st := &r.c.Steps[i]
		if st.Gate && !slices.Contains(r.o.ReleasedGates, st.ID) {
			gated = true
		}
		if gated || st.Risk != domain.RiskIrreversible {
			continue
		}
		if err := r.pol.CanAuthorizeIrreversible(); err != nil {
			code := domain.ErrorCode(err)
			return &end{status: domain.StatusFailed, code: code,
				msg: fmt.Sprintf("step %s is irreversible and can never be authorized in this run (%s); nothing was sent", st.ID, denialText(err))}
		}
	}
	return nil
}

func denialText(err error) string {
	var d *policy.DeniedError
	if errors.As(err, &d) {
		return d.Message
	}
	return err.Error()
}

func usesRunCapability(c *domain.Capability) bool {
	for _, rule := range c.Recovery {
		if rule.Remedy == domain.RemedyRunCapability {
			return true
		}
	}
	return false
}

// dispatcher builds a dispatcher under c's policy, sharing the run's
// surface, lease, secrets, redactor and evidence. A sub-run's policy also
// needs its caller's to allow every URL.
func (r *run) dispatcher(c *domain.Capability) (*runtime.Dispatcher, error) {
	var parent *policy.Engine
	if r.parent != nil {
		parent = r.parent.pol
	}
	var actions []domain.ActionType
	if len(c.Policy.AllowedActions) > 0 {
		// The engine itself navigates to the entrypoint and reloads as a
		// declared remedy.
		actions = append(slices.Clone(c.Policy.AllowedActions), domain.ActNavigate, domain.ActReload)
	}
	pol, err := policy.New(policy.Config{
		Profile: policy.ProfileAutomation, AllowedDomains: r.rt.Domains(c.Policy.AllowedDomains), AllowedActions: actions,
		EntryOrigin: r.rt.EntryOrigin(), Parent: parent,
		AllowIrreversible: r.o.AllowIrreversible, ContentHash: r.o.Capability.Hash, Approval: r.o.Approval,
	})
	if err != nil {
		return nil, domain.Wrap(domain.CodeCapabilityInvalid, err, "policy")
	}
	r.pol = pol
	return r.rt.Dispatcher(r.o.Surface, pol)
}

func (r *run) expand(pattern string) string {
	s := strings.ReplaceAll(pattern, "{base_url}", strings.TrimRight(r.o.BaseURL, "/"))
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		name := strings.TrimSuffix(strings.TrimPrefix(m, "{input."), "}")
		return url.PathEscape(fmt.Sprint(r.inputs[name]))
	})
}

// expandChecked expands a URL pattern and refuses one whose placeholder
// names an input without a value.
func (r *run) expandChecked(pattern string) (string, error) {
	for _, m := range placeholder.FindAllString(pattern, -1) {
		name := strings.TrimSuffix(strings.TrimPrefix(m, "{input."), "}")
		if _, ok := r.inputs[name]; !ok {
			return "", fmt.Errorf("URL placeholder %s has no value", m)
		}
	}
	return r.expand(pattern), nil
}

var placeholder = regexp.MustCompile(`\{input\.[a-z][a-z0-9_]*\}`)

// enter navigates to the entrypoint, waits for a known screen and runs the
// prerequisites whose condition holds.
func (r *run) enter(ctx context.Context) *end {
	entry, err := r.expandChecked(r.c.Entrypoint.URLPattern)
	if err != nil {
		return failEnd(domain.CodeInputInvalid, "entrypoint: %v", err)
	}
	nav := domain.Action{Type: domain.ActNavigate, URL: entry, StepID: "entry"}
	if _, err := r.disp.Act(ctx, nil, nav, ""); err != nil {
		return errEnd(err)
	}
	exp := r.entryExpectation()
	exp.name = "entry"
	exp.early = func(s *domain.UiSnapshot) bool {
		for _, p := range r.c.Prerequisites {
			if p.When != nil && evalTrue(s, p.When) {
				return true
			}
		}
		return false
	}
entry:
	for {
		v := r.settle(ctx, exp, r.o.StepWait*2)
		switch v.kind {
		case vRecovery:
			if e := r.recover(ctx, v.rule); e != nil {
				return e
			}
			continue
		case vOutcome:
			return &end{status: domain.StatusBusinessOutcome, outcome: v.outcome}
		case vUnexpected, vFailed:
			return v.end()
		}
		for _, p := range r.c.Prerequisites {
			if p.When != nil && !evalTrue(v.snap, p.When) {
				continue
			}
			e := r.runCapability(ctx, p.Capability, p.ContentHash, "prerequisite")
			if e == nil {
				continue
			}
			// A prerequisite that failed on a screen it did not know
			// hands that screen back: a session gone right after
			// sign-on is this capability's session_expired, bounded by
			// that rule's max_attempts; then the entry is judged again.
			if e = r.afterSubFailure(ctx, e); e != nil {
				return e
			}
			continue entry
		}
		return nil
	}
}

// runCapability runs another capability in place, in the same session.
// pin, when set, is the content hash the caller pinned for it.
func (r *run) runCapability(ctx context.Context, ref, pin, why string) *end {
	if r.o.Library == nil {
		return failEnd(domain.CodeCapabilityInvalid, "no capability library to run %s", ref)
	}
	for p := r; p != nil; p = p.parent {
		if p.c.ID == strings.SplitN(ref, "@", 2)[0] {
			return failEnd(domain.CodeCapabilityInvalid, "capability %s calls itself", ref)
		}
	}
	l, err := Resolve(r.o.Library, ref, pin)
	if err != nil {
		return errEnd(err)
	}
	// A capability run in place gets no caller inputs: its defaults apply,
	// and one that needs an input cannot be called this way.
	subInputs, err := capability.BindInputs(l.Capability, nil)
	if err != nil {
		return failEnd(domain.CodeInputInvalid, "%s cannot run in place: %v", l.Capability.Ref(), err)
	}
	subCap, err := capability.BindTemplates(l.Capability, subInputs)
	if err != nil {
		return failEnd(domain.CodeInputInvalid, "%s cannot run in place: %v", l.Capability.Ref(), err)
	}
	sub := &run{o: r.o, c: subCap, rec: r.rec, rt: r.rt, start: r.o.Now(),
		outputs: map[string]any{}, attempts: map[string]int{}, inputs: subInputs, parent: r, eff: r.eff}
	sub.o.Capability = l
	disp, err := sub.dispatcher(l.Capability)
	if err != nil {
		return errEnd(err)
	}
	sub.disp = disp
	// The file's base name only: a bundle must hold no host path to be
	// shareable (cua verify), and the content hash names the capability.
	file := l.File
	if file != "" {
		file = filepath.Base(file)
	}
	r.emit("", evidence.CapabilityStarted{Capability: l.Capability.Ref(), ContentHash: l.Hash, File: file, Why: why})
	unconfirmed := len(r.eff.unconfirmed())
	e := sub.steps(ctx, 0)
	r.subDispatches += disp.Dispatches() + sub.subDispatches
	r.resolutions += sub.resolutions
	r.drifted += sub.drifted
	if e != nil {
		if e.status == domain.StatusBusinessOutcome {
			return failEnd(domain.CodePrerequisiteFailed, "%s ended with outcome %s", l.Capability.Ref(), e.outcome.Code)
		}
		e.msg = l.Capability.Ref() + ": " + e.msg
		e.handBack = handsBack(e) && len(r.eff.unconfirmed()) == unconfirmed
		return e
	}
	r.emit("", evidence.CapabilityFinished{Capability: l.Capability.Ref()})
	return nil
}
