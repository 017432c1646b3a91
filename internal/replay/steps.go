package replay

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/targeting"
)

// expectation is what a step needs to see before (or after) it acts.
type expectation struct {
	name  string
	check func(*domain.UiSnapshot) (bool, domain.FailureCode, string)
	// early, when set, is judged before recovery rules: a screen it accepts
	// is expected even if a recovery rule would also match (the sign-on
	// form at entry is a prerequisite, not an expired session).
	early func(*domain.UiSnapshot) bool
}

type verdictKind int

const (
	vExpected verdictKind = iota
	vOutcome
	vRecovery
	vUnexpected
	vFailed
)

type verdict struct {
	kind    verdictKind
	snap    *domain.UiSnapshot
	outcome *domain.Outcome
	rule    *domain.RecoveryRule
	code    domain.FailureCode
	msg     string
	err     error
}

func (v verdict) end() *end {
	if v.err != nil {
		return errEnd(v.err)
	}
	return &end{status: domain.StatusFailed, code: v.code, msg: v.msg}
}

func evalTrue(s *domain.UiSnapshot, p *domain.Predicate) bool {
	ok, err := targeting.Eval(s, p)
	return err == nil && ok
}

// stepExpectation is the step's precondition (when declared) and, for a
// targeted action, its target resolving to exactly one node.
func (r *run) stepExpectation(st *domain.Step) expectation {
	return expectation{name: st.ID, check: func(s *domain.UiSnapshot) (bool, domain.FailureCode, string) {
		if st.Precondition != nil && !evalTrue(s, st.Precondition) {
			return false, domain.CodeUnexpectedState, fmt.Sprintf("step %s: precondition does not hold", st.ID)
		}
		if st.Target != nil && st.Action.NeedsTarget() {
			if _, err := targeting.Resolve(s, *st.Target); err != nil {
				return false, domain.ErrorCode(err), fmt.Sprintf("step %s: %v", st.ID, err)
			}
		}
		return true, "", ""
	}}
}

func predicateExpectation(name string, p *domain.Predicate) expectation {
	return expectation{name: name, check: func(s *domain.UiSnapshot) (bool, domain.FailureCode, string) {
		ok, err := targeting.Eval(s, p)
		if err != nil {
			return false, domain.CodeCapabilityInvalid, fmt.Sprintf("%s: %v", name, err)
		}
		if !ok {
			return false, domain.CodeUnexpectedState, name + " does not hold"
		}
		return true, "", ""
	}}
}

// classify judges one snapshot: declared outcomes first, then recovery
// rules, then an undeclared modal, then the expectation.
func (r *run) classify(s *domain.UiSnapshot, exp expectation) verdict {
	for i := range r.c.Outcomes {
		if evalTrue(s, &r.c.Outcomes[i].When) {
			return verdict{kind: vOutcome, snap: s, outcome: &r.c.Outcomes[i]}
		}
	}
	if exp.early != nil && exp.early(s) {
		return verdict{kind: vExpected, snap: s}
	}
	for i := range r.c.Recovery {
		if evalTrue(s, &r.c.Recovery[i].When) {
			return verdict{kind: vRecovery, snap: s, rule: &r.c.Recovery[i]}
		}
	}
	if d := r.undeclaredModal(s); d != "" {
		return verdict{kind: vFailed, snap: s, code: domain.CodeUnexpectedState,
			msg: fmt.Sprintf("an undeclared dialog %q is open; it was not touched", d)}
	}
	ok, code, msg := exp.check(s)
	if ok {
		return verdict{kind: vExpected, snap: s}
	}
	return verdict{kind: vUnexpected, snap: s, code: code, msg: msg}
}

// undeclaredModal returns the name of an open dialog that the capability
// never mentions, or "".
func (r *run) undeclaredModal(s *domain.UiSnapshot) string {
	declared := r.declaredDialogs()
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if (n.Role != "dialog" && n.Role != "alertdialog") || n.States.Hidden {
			continue
		}
		if !slices.ContainsFunc(declared, func(d *domain.TargetDescriptor) bool { return dialogMatches(d, n) }) {
			if n.Name == "" {
				return n.Role
			}
			return n.Name
		}
	}
	if s.Dialog != nil && !slices.ContainsFunc(declared, func(d *domain.TargetDescriptor) bool { return d.Role == "alertdialog" }) {
		return s.Dialog.Message
	}
	return ""
}

// dialogMatches reports whether a declared dialog descriptor covers node n:
// the same role, and the declared name (when there is one) matching.
func dialogMatches(d *domain.TargetDescriptor, n *domain.Node) bool {
	if d.Role != n.Role {
		return false
	}
	if d.Name == nil {
		return true
	}
	if d.Name.Affix() {
		return affixName(d.Name, n.Name)
	}
	switch d.Name.Match {
	case domain.MatchContains:
		return strings.Contains(perception.Fold(n.Name), perception.Fold(d.Name.Value))
	case domain.MatchRegex:
		re, err := regexp.Compile(d.Name.Value)
		return err == nil && re.MatchString(n.Name)
	}
	return perception.FoldEqual(n.Name, perception.Fold(d.Name.Value))
}

// declaredDialogs lists every dialog or alertdialog descriptor the
// capability names, in steps, outcomes, recovery rules and its checkpoint:
// those dialogs are part of the workflow; any other one is an unknown screen.
func (r *run) declaredDialogs() []*domain.TargetDescriptor {
	var out []*domain.TargetDescriptor
	add := func(t *domain.TargetDescriptor) {
		if t != nil && (t.Role == "dialog" || t.Role == "alertdialog") {
			out = append(out, t)
		}
	}
	walk := func(p *domain.Predicate) {
		p.Walk(func(q *domain.Predicate) {
			q.NodeTargets(func(_ []string, t *domain.TargetDescriptor) { add(t) })
		})
	}
	for i := range r.c.Steps {
		st := &r.c.Steps[i]
		add(st.Target)
		walk(st.Precondition)
		walk(st.Postcondition)
		if st.Wait != nil {
			walk(st.Wait.Until)
		}
	}
	for i := range r.c.Outcomes {
		walk(&r.c.Outcomes[i].When)
	}
	for i := range r.c.Recovery {
		walk(&r.c.Recovery[i].When)
	}
	if r.c.Checkpoint != nil {
		walk(&r.c.Checkpoint.When)
	}
	return out
}

// settle observes until the screen is classified as something other than
// unexpected, or until timeout; changes are awaited through the surface's
// change notifications, never by sleeping.
func (r *run) settle(ctx context.Context, exp expectation, timeout time.Duration) verdict {
	deadline := time.Now().Add(timeout)
	for {
		snap, err := r.disp.Observe(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return verdict{kind: vFailed, code: ctxCode(ctx), msg: "run deadline reached"}
			}
			return verdict{kind: vFailed, snap: snap, err: err}
		}
		v := r.classify(snap, exp)
		r.noteSnapshot(snap)
		if v.kind != vUnexpected {
			return v
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return v
		}
		wctx, cancel := context.WithTimeout(ctx, remaining)
		err = r.disp.WaitChange(wctx, snap.Seq)
		cancel()
		if ctx.Err() != nil {
			return verdict{kind: vFailed, code: ctxCode(ctx), msg: "run deadline reached while waiting for " + exp.name}
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return verdict{kind: vFailed, snap: snap, err: err}
		}
	}
}

func ctxCode(ctx context.Context) domain.FailureCode {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return domain.CodeTimeout
	}
	return domain.CodeCanceled
}

func (r *run) stepWait(st *domain.Step) time.Duration {
	if st.Wait != nil && st.Wait.TimeoutMS > 0 {
		return time.Duration(st.Wait.TimeoutMS) * time.Millisecond
	}
	return r.o.StepWait
}

// steps runs the capability's steps from steps[from] (0 unless the run
// reentered), then checks its checkpoint and outputs.
func (r *run) steps(ctx context.Context, from int) *end {
	keys := make([]string, len(r.c.Steps))
	r.sent = make([]bool, len(r.c.Steps))
	lastCheckpoint := -1
	for i := from; i < len(r.c.Steps); {
		st := &r.c.Steps[i]
		r.stepsRun++
		if r.stepsRun > r.c.Policy.MaxSteps {
			return failEnd(domain.CodeBudgetExceeded, "more than max_steps=%d step executions", r.c.Policy.MaxSteps)
		}
		if r.sent[i] {
			// The step acted before a remedy ran: its effect may have
			// landed. Check before running it again (invariant 12).
			landed, e := r.landed(ctx, st)
			if e != nil {
				return e
			}
			if landed {
				r.sent[i] = false
				if st.Checkpoint {
					lastCheckpoint = i
				}
				i++
				continue
			}
		}
		if st.When != nil && !r.sent[i] {
			if skip, e := r.skipUnless(ctx, i); e != nil {
				return e
			} else if skip {
				i++
				continue
			}
		}
		if st.Gate && !slices.Contains(r.o.ReleasedGates, st.ID) {
			r.emit(st.ID, evidence.GateReached{Description: st.Description})
			e := failEnd(domain.CodeGateReached, "step %s is gated for human review", st.ID)
			if next, ok := r.park(ctx, i, e); ok {
				lastCheckpoint, i = r.checkpointBefore(next, lastCheckpoint), next
				continue
			}
			return e
		}
		started := time.Now()
		res := domain.StepResult{ID: r.stepName(st.ID), Action: st.Action, Attempts: 1}
		v := r.settle(ctx, r.stepExpectation(st), r.o.StepWait)
		switch v.kind {
		case vOutcome:
			return &end{status: domain.StatusBusinessOutcome, outcome: v.outcome}
		case vRecovery:
			if e := r.recover(ctx, v.rule); e != nil {
				return e
			}
			i = r.reanchor(ctx, i, lastCheckpoint, keys)
			continue
		case vUnexpected, vFailed:
			e := v.end()
			if next, ok := r.park(ctx, i, e); ok {
				lastCheckpoint, i = r.checkpointBefore(next, lastCheckpoint), next
				continue
			}
			r.recordStep(ctx, res, started, e)
			r.proposeHeal(ctx, st, v)
			return e
		}
		keys[i] = pageKey(v.snap, st)
		if e := r.act(ctx, st, v.snap, &res); e != nil {
			if e.recoverWith != nil {
				res.Status, res.Message = "interrupted", e.msg
				r.recordStep(ctx, res, started, nil)
				if e := r.recover(ctx, e.recoverWith); e != nil {
					return e
				}
				i = r.reanchor(ctx, i, lastCheckpoint, keys)
				continue
			}
			r.recordStep(ctx, res, started, e)
			return e
		}
		if st.Postcondition != nil && st.Action != domain.ActAssert {
			pv := r.settle(ctx, predicateExpectation("step "+st.ID+" postcondition", st.Postcondition), r.stepWait(st))
			switch pv.kind {
			case vOutcome:
				r.recordStep(ctx, res, started, nil)
				return &end{status: domain.StatusBusinessOutcome, outcome: pv.outcome}
			case vRecovery:
				r.recordStep(ctx, res, started, nil)
				if e := r.recover(ctx, pv.rule); e != nil {
					return e
				}
				i = r.reanchor(ctx, i, lastCheckpoint, keys)
				continue
			case vUnexpected, vFailed:
				e := pv.end()
				r.recordStep(ctx, res, started, e)
				// The step acted: after a takeover it is checked, never blindly sent again.
				r.sent[i] = true
				if next, ok := r.park(ctx, i, e); ok {
					lastCheckpoint, i = r.checkpointBefore(next, lastCheckpoint), next
					continue
				}
				return e
			}
			r.confirm(st, &res)
		}
		r.sent[i] = false
		r.recordStep(ctx, res, started, nil)
		if st.Checkpoint {
			lastCheckpoint = i
			if r.rt.Evidence != nil {
				_ = r.rt.Evidence.Sync()
			}
		}
		i++
	}
	return r.finish(ctx)
}

// finish judges the capability's checkpoint (applying recovery rules that
// match while it is judged) and checks its outputs.
func (r *run) finish(ctx context.Context) *end {
	for r.c.Checkpoint != nil {
		v := r.settle(ctx, predicateExpectation("checkpoint", &r.c.Checkpoint.When), r.o.StepWait)
		switch v.kind {
		case vOutcome:
			return &end{status: domain.StatusBusinessOutcome, outcome: v.outcome}
		case vRecovery:
			if e := r.recover(ctx, v.rule); e != nil {
				return e
			}
			continue
		case vUnexpected, vFailed:
			e := v.end()
			if e.code == domain.CodeUnexpectedState {
				e.code = domain.CodeCheckpointFailed
			}
			return e
		}
		break
	}
	for _, spec := range r.c.Outputs {
		v, ok := r.outputs[spec.Name]
		if !ok {
			if spec.Required {
				return failEnd(domain.CodeOutputInvalid, "required output %s was not extracted", spec.Name)
			}
			continue
		}
		if spec.Type == domain.TypeArray {
			if err := checkListOutput(spec, v); err != nil {
				return failEnd(domain.CodeOutputInvalid, "%v", err)
			}
			continue
		}
		if err := checkOutput(spec, fmt.Sprint(v)); err != nil {
			return failEnd(domain.CodeOutputInvalid, "%v", err)
		}
	}
	return nil
}

func (r *run) stepName(id string) string {
	if r.parent != nil {
		return r.c.ID + "/" + id
	}
	return id
}

// optionalExpectation is what the screen must show at steps[i], an
// optional step: its when holds, or the screen is ready for what comes
// after it (the next optional step's when, and so on, up to the first
// step without a when, whose own expectation; the checkpoint when none).
func (r *run) optionalExpectation(i int) expectation {
	st := &r.c.Steps[i]
	return expectation{name: st.ID, check: func(s *domain.UiSnapshot) (bool, domain.FailureCode, string) {
		for j := i; j < len(r.c.Steps); j++ {
			next := &r.c.Steps[j]
			if next.When == nil {
				return r.stepExpectation(next).check(s)
			}
			if evalTrue(s, next.When) {
				return true, "", ""
			}
		}
		return true, "", ""
	}}
}

// entryExpectation is what the entrypoint must show: the first step's
// expectation, or, when it is optional, its optionalExpectation.
func (r *run) entryExpectation() expectation {
	if r.c.Steps[0].When != nil {
		return r.optionalExpectation(0)
	}
	return r.stepExpectation(&r.c.Steps[0])
}

// skipUnless settles an optional step: it waits until its when holds or
// the screen is ready for what follows (optionalExpectation), then
// records the step skipped when its when does not hold. A screen that
// is neither (an outcome, a recovery condition, an unknown screen) is left
// to the step's own judgement, which handles it as for any step.
func (r *run) skipUnless(ctx context.Context, i int) (bool, *end) {
	st := &r.c.Steps[i]
	v := r.settle(ctx, r.optionalExpectation(i), r.o.StepWait)
	if v.kind != vExpected || evalTrue(v.snap, st.When) {
		return false, nil
	}
	res := domain.StepResult{ID: r.stepName(st.ID), Action: st.Action, Status: "skipped", Message: "its when does not hold"}
	r.rec.Steps = append(r.rec.Steps, res)
	if r.o.OnStep != nil {
		r.o.OnStep(res)
	}
	r.emit(res.ID, evidence.StepFinished{Status: res.Status})
	return true, nil
}

func (r *run) recordStep(ctx context.Context, res domain.StepResult, started time.Time, e *end) {
	res.DurationMS = time.Since(started).Milliseconds()
	if res.Status == "" {
		res.Status = "ok"
	}
	if e != nil {
		res.Status = "failed"
		res.Failure = e.code
		res.Message = e.msg
	}
	r.rec.Steps = append(r.rec.Steps, res)
	if r.o.OnStep != nil {
		r.o.OnStep(res)
	}
	ev := evidence.StepFinished{Status: res.Status, Strategy: res.Strategy, DurationMS: res.DurationMS}
	// The screen after the step: its digest, and, when the evidence level
	// keeps it, masked, joined to its event by name.
	r.stepEvidence(ctx, &ev, res, e)
	if res.Effect != "" {
		ev.Risk, ev.Effect = res.Risk, res.Effect
	}
	r.emit(res.ID, ev)
}

// pageKey identifies the document a step acted in, for re-anchoring.
func pageKey(s *domain.UiSnapshot, st *domain.Step) string {
	if st.Target != nil && st.Target.Scope != nil && st.Target.Scope.Frame != "" {
		for _, f := range s.Frames {
			if f.Path == st.Target.Scope.Frame || f.Name == st.Target.Scope.Frame {
				return f.Path + " " + f.URL
			}
		}
	}
	return s.URL
}

// reanchor picks the step to resume at after a remedy: the earliest step
// after the last checkpoint, and after the last step before i that must
// not repeat (elevated, irreversible), that acted in a document that is
// showing again; else the current step. Steps at or before a checkpoint,
// or an elevated or irreversible step already passed, never repeat.
func (r *run) reanchor(ctx context.Context, i, lastCheckpoint int, keys []string) int {
	snap, err := r.disp.Observe(ctx)
	if err != nil {
		return i
	}
	floor := lastCheckpoint
	for k := i - 1; k > lastCheckpoint; k-- {
		if mustNotRepeat(&r.c.Steps[k]) {
			floor = k
			break
		}
	}
	for j := floor + 1; j < i; j++ {
		if keys[j] != "" && keys[j] == pageKey(snap, &r.c.Steps[j]) {
			r.emit(r.c.Steps[j].ID, evidence.Reanchored{From: r.c.Steps[i].ID})
			return j
		}
	}
	return i
}

// recover applies a recovery rule within its budget. A remedy that cannot
// run (its capability is missing, refused or fails) hands the run to a
// human: the screen needed a remedy the run could not apply.
func (r *run) recover(ctx context.Context, rule *domain.RecoveryRule) *end {
	r.attempts[rule.ID]++
	n := r.attempts[rule.ID]
	if n > rule.MaxAttempts {
		r.emit("", evidence.RecoveryExhausted{Rule: rule.ID, MaxAttempts: rule.MaxAttempts})
		return failEnd(domain.CodeRecoveryExhausted, "recovery %s exhausted after %d attempt(s)", rule.ID, rule.MaxAttempts)
	}
	r.rec.RecoveryAttempts++
	r.top().recovered = append(r.top().recovered, rule.ID)
	r.emit("", evidence.Recovery{Rule: rule.ID, Remedy: rule.Remedy, Attempt: n})
	if d := time.Duration(rule.Backoff.Delay(n)) * time.Millisecond; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return failEnd(ctxCode(ctx), "canceled during recovery backoff")
		case <-t.C:
		}
	}
	switch rule.Remedy {
	case domain.RemedyReload:
		return r.reload(ctx, rule)
	case domain.RemedyRunCapability:
		e := r.runCapability(ctx, rule.Capability, rule.ContentHash, "recovery "+rule.ID)
		if e != nil && e.handBack {
			// The remedy failed on a screen it did not know: this
			// capability's rules judge it, so a condition that is still
			// there counts another attempt of its rule (and ends
			// RECOVERY_EXHAUSTED past max_attempts).
			if je, judged := r.judgeHandBack(ctx, e); judged {
				return je
			}
		}
		if e != nil && e.status == domain.StatusFailed && !r.top().c.Escalation.Escalates(e.code) {
			e.status = domain.StatusNeedsHuman
			e.msg = fmt.Sprintf("recovery %s could not run: %s", rule.ID, e.msg)
		}
		return e
	case domain.RemedyWait:
	}
	return nil
}

// reload applies a reload remedy. A document that came from a POST is
// never reloaded (that would send the form again): the run goes back to
// its entrypoint by GET, or, when the rule says after_post: refuse, hands
// over to a human.
func (r *run) reload(ctx context.Context, rule *domain.RecoveryRule) *end {
	step := "recovery:" + rule.ID
	posted := false
	if snap, err := r.disp.Observe(ctx); err == nil && snap.PostBacked {
		posted = true
	}
	if !posted {
		_, err := r.disp.Act(ctx, nil, domain.Action{Type: domain.ActReload, StepID: step}, "")
		if err == nil {
			return nil
		}
		if !errors.Is(err, surface.ErrResubmit) {
			return errEnd(err)
		}
	}
	if rule.AfterPost == domain.AfterPostRefuse {
		r.emit("", evidence.ReloadRefused{Rule: rule.ID, Reason: "the page came from a submitted form"})
		return &end{status: domain.StatusNeedsHuman, code: domain.CodeRecoveryExhausted,
			msg: fmt.Sprintf("recovery %s: the page came from a submitted form, and reloading it would send the form again (after_post: refuse)", rule.ID)}
	}
	entry, err := r.expandChecked(r.c.Entrypoint.URLPattern)
	if err != nil {
		return failEnd(domain.CodeInputInvalid, "entrypoint: %v", err)
	}
	r.emit("", evidence.ReloadAsGet{Rule: rule.ID, URL: entry})
	if _, err := r.disp.Act(ctx, nil, domain.Action{Type: domain.ActNavigate, URL: entry, StepID: step}, ""); err != nil {
		return errEnd(err)
	}
	return nil
}

// act performs one step on the snapshot it was classified on.
func (r *run) act(ctx context.Context, st *domain.Step, snap *domain.UiSnapshot, res *domain.StepResult) *end {
	a := domain.Action{Type: st.Action, StepID: r.stepName(st.ID), Target: st.Target, Value: st.Value, Key: st.Key, Risk: st.Risk}
	switch st.Action {
	case domain.ActExtract:
		rs, err := targeting.Resolve(snap, *st.Target)
		if err != nil {
			return errEnd(err)
		}
		r.noteResolution(res, rs)
		text := targeting.ExtractText(snap, rs)
		if r.rt.SecretLog.Reveals(text) {
			return failEnd(domain.CodeOutputInvalid, "step %s: the extracted value contains a secret; a secret can never be read back", st.ID)
		}
		val, err := extractValue(r.c, st, text, r.o.Redactor.RegisterLiteral)
		if err != nil {
			return failEnd(domain.CodeOutputInvalid, "step %s: %v", st.ID, err)
		}
		r.setOutput(st.Into, val)
		r.emit(st.ID, evidence.Extracted{Output: st.Into, Strategy: rs.Strategy})
		return nil
	case domain.ActWaitFor:
		for {
			v := r.settle(ctx, predicateExpectation("step "+st.ID, st.Wait.Until), r.stepWait(st))
			switch v.kind {
			case vExpected:
				return nil
			case vOutcome:
				return &end{status: domain.StatusBusinessOutcome, outcome: v.outcome}
			case vRecovery:
				if e := r.recover(ctx, v.rule); e != nil {
					return e
				}
				continue
			}
			return v.end()
		}
	case domain.ActAssert:
		if !evalTrue(snap, st.Postcondition) {
			return failEnd(domain.CodeUnexpectedState, "step %s: assertion does not hold", st.ID)
		}
		return nil
	case domain.ActNavigate:
		u, err := r.expandChecked(st.URL)
		if err != nil {
			return failEnd(domain.CodeInputInvalid, "step %s: %v", st.ID, err)
		}
		a.URL = u
	}
	text := ""
	if st.Value != nil {
		switch st.Value.Kind() {
		case "literal":
			text = *st.Value.Literal
		case "input":
			v, ok := r.inputs[st.Value.Input]
			if !ok {
				return failEnd(domain.CodeInputInvalid, "step %s: input %s has no value (optional, no default)", st.ID, st.Value.Input)
			}
			text = fmt.Sprint(v)
		case "output":
			v, ok := r.outputs[st.Value.Output]
			if !ok {
				return failEnd(domain.CodeOutputInvalid, "step %s: output %s was not extracted", st.ID, st.Value.Output)
			}
			text = fmt.Sprint(v)
		}
	}
	return r.dispatch(ctx, st, snap, a, text, res)
}

func (r *run) noteResolution(res *domain.StepResult, rs targeting.Resolution) {
	res.Strategy = rs.Strategy
	res.Drifted = rs.Drifted
	r.resolutions++
	if rs.Drifted {
		r.drifted++
	}
	r.rec.StrategyMix[rs.Strategy]++
}
