package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/policy"
)

// stepRisk is the risk a step declares.
func stepRisk(st *domain.Step) domain.Risk {
	if st.Risk == "" {
		return domain.RiskSafe
	}
	return st.Risk
}

// dispatch sends one step's action and records its effect. A dispatch that
// fails for a reason the screen may explain (a value that did not land, a
// click another element took, a node that went away) is not the end of the
// run: the screen is observed and classified first, and only an
// unexplained failure ends it, with what the screen showed.
func (r *run) dispatch(ctx context.Context, st *domain.Step, snap *domain.UiSnapshot, a domain.Action, text string, res *domain.StepResult) *end {
	i := r.stepIndex(st)
	name := r.stepName(st.ID)
	before := r.disp.Dispatches()
	out, err := r.disp.Act(ctx, snap, a, text)
	if out.Resolution != nil {
		r.noteResolution(res, *out.Resolution)
		if out.Resolution.Drifted {
			r.proposeDrift(ctx, st, snap, out.Resolution.Node, out.Resolution.Strategy)
		}
	}
	risk := domain.MaxRisk(stepRisk(st), out.Risk)
	eff := sentBy(err, before, r.disp.Dispatches())
	if eff.Sent() && i >= 0 {
		r.sent[i] = true
	}
	r.eff.set(name, risk, eff)
	if risk.Rank() >= domain.RiskElevated.Rank() {
		res.Risk, res.Effect = risk, r.eff.get(name)
	}
	if err == nil {
		return nil
	}
	if policy.IsDenied(err) {
		var d *policy.DeniedError
		errors.As(err, &d)
		return &end{status: domain.StatusFailed, code: d.Code, msg: d.Message}
	}
	switch domain.ErrorCode(err) {
	case domain.CodeLeaseLost, domain.CodeSurfaceCrashed, domain.CodeCanceled, domain.CodeTimeout,
		domain.CodeSecretUnavailable, domain.CodeDomainNotAllowed, domain.CodeInternal:
		return errEnd(err)
	}
	if ctx.Err() != nil {
		return failEnd(ctxCode(ctx), "run deadline reached during step %s", st.ID)
	}
	return r.explain(ctx, st, err, eff.Sent() || risk.Rank() < domain.RiskElevated.Rank())
}

// PostconditionHeld is the rule a dispatch_explained event names when a
// failed dispatch left the screen where the step's postcondition holds.
// Rule ids are identifiers, so it cannot be taken for one.
const PostconditionHeld = "postcondition held"

// explain classifies the screen after a failed dispatch: a declared
// outcome or recovery rule takes over; then, when the step's postcondition
// already holds, its intent is met and the run goes on (mayMeet: an
// elevated or irreversible step only when its action was sent, so a screen
// it never touched cannot stand for it; the effect ledger keeps its own
// rules); anything else ends the run
// with the dispatch error and what the screen showed.
func (r *run) explain(ctx context.Context, st *domain.Step, err error, mayMeet bool) *end {
	cause := errEnd(err)
	r.emit(r.stepName(st.ID), evidence.DispatchFailedClassify{Error: err.Error()})
	snap, oerr := r.disp.Observe(ctx)
	if oerr != nil {
		cause.msg = fmt.Sprintf("step %s: %s; the screen could not be read afterwards: %v", st.ID, cause.msg, oerr)
		return cause
	}
	r.noteSnapshot(snap)
	v := r.classify(snap, r.stepExpectation(st))
	switch v.kind {
	case vOutcome:
		return &end{status: domain.StatusBusinessOutcome, outcome: v.outcome}
	case vRecovery:
		r.emit(r.stepName(st.ID), evidence.DispatchExplained{Rule: v.rule.ID})
		return &end{recoverWith: v.rule, msg: cause.msg}
	}
	if st.Postcondition != nil && st.Action != domain.ActAssert && mayMeet &&
		evalTrue(snap, st.Postcondition) {
		r.emit(r.stepName(st.ID), evidence.DispatchExplained{Rule: PostconditionHeld})
		r.o.Logger.InfoContext(ctx, "failed dispatch, postcondition holds: the step's intent is met",
			"step", st.ID, "error", err.Error())
		return nil
	}
	switch v.kind {
	case vFailed:
		e := v.end()
		e.msg = fmt.Sprintf("step %s: %s; then %s", st.ID, cause.msg, e.msg)
		return e
	case vUnexpected:
		return &end{status: domain.StatusFailed, code: v.code,
			msg: fmt.Sprintf("step %s: %s; then the screen matched nothing declared: %s", st.ID, cause.msg, v.msg)}
	}
	cause.msg = fmt.Sprintf("step %s: %s; the screen still shows what the step expects and nothing declared explains the failure", st.ID, cause.msg)
	return cause
}

// stepIndex returns st's index in the run's capability, -1 if it is not
// one of its steps.
func (r *run) stepIndex(st *domain.Step) int {
	for i := range r.c.Steps {
		if &r.c.Steps[i] == st {
			return i
		}
	}
	return -1
}
