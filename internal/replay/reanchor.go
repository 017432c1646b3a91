package replay

import (
	"context"
	"fmt"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
)

// mustNotRepeat reports whether a step may never be sent twice: it is
// elevated or irreversible, or a checkpoint.
func mustNotRepeat(st *domain.Step) bool {
	return stepRisk(st).Rank() >= domain.RiskElevated.Rank() || st.Checkpoint
}

// landed decides, after a remedy, whether a step that already acted took
// effect. It waits (up to the step's wait) for either the step's
// postcondition, which means the effect landed and the step is not run
// again, or the step's own expectation (its target back on screen), which
// means it may run again, unless it must not be repeated: an elevated,
// irreversible or checkpoint step whose result the screen cannot confirm
// hands the run to a human (EFFECT_UNKNOWN) and is never sent twice.
func (r *run) landed(ctx context.Context, st *domain.Step) (bool, *end) {
	name := r.stepName(st.ID)
	unknown := func(why string) *end {
		r.emit(name, evidence.EffectUnknown{Risk: stepRisk(st), Why: why})
		return &end{status: domain.StatusNeedsHuman, code: domain.CodeEffectUnknown,
			msg: fmt.Sprintf("step %s (%s) was sent before a recovery and %s; it is not sent again", st.ID, stepRisk(st), why)}
	}
	if st.Postcondition == nil || st.Action == domain.ActAssert {
		if mustNotRepeat(st) {
			return false, unknown("declares no postcondition to tell whether it took effect")
		}
		return false, nil
	}
	post := predicateExpectation("step "+st.ID+" postcondition", st.Postcondition)
	again := r.stepExpectation(st)
	exp := expectation{name: "step " + st.ID + " after recovery", check: func(s *domain.UiSnapshot) (bool, domain.FailureCode, string) {
		if ok, _, _ := post.check(s); ok {
			return true, "", ""
		}
		return again.check(s)
	}}
	for {
		v := r.settle(ctx, exp, r.stepWait(st))
		switch v.kind {
		case vOutcome:
			r.eff.confirmAll()
			return false, &end{status: domain.StatusBusinessOutcome, outcome: v.outcome}
		case vRecovery:
			if e := r.recover(ctx, v.rule); e != nil {
				return false, e
			}
			continue
		case vFailed:
			if mustNotRepeat(st) {
				return false, unknown("then " + v.end().msg)
			}
			return false, v.end()
		case vUnexpected:
			if mustNotRepeat(st) {
				return false, unknown("the screen shows neither its postcondition nor its target: " + v.msg)
			}
			return false, nil
		}
		if ok, _, _ := post.check(v.snap); ok {
			r.emit(name, evidence.EffectLanded{Risk: stepRisk(st)})
			res := domain.StepResult{ID: name, Action: st.Action, Status: "landed", Attempts: 1,
				Message: "its postcondition held after the recovery: not repeated"}
			r.confirm(st, &res)
			r.rec.Steps = append(r.rec.Steps, res)
			return true, nil
		}
		if mustNotRepeat(st) {
			return false, unknown("its postcondition does not hold")
		}
		return false, nil
	}
}

// confirm marks an elevated or irreversible step's effect confirmed: its
// postcondition held after it acted.
func (r *run) confirm(st *domain.Step, res *domain.StepResult) {
	risk := stepRisk(st)
	if risk.Rank() < domain.RiskElevated.Rank() {
		return
	}
	name := r.stepName(st.ID)
	if r.eff.get(name).Sent() {
		r.eff.set(name, risk, domain.EffectConfirmed)
	}
	res.Risk, res.Effect = risk, r.eff.get(name)
}
