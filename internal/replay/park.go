package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/runtime"
)

// DefaultParkTimeout is how long a parked run waits for a person when
// Options.ParkTimeout is zero.
const DefaultParkTimeout = 15 * time.Minute

// takeoverSettle bounds the wait for the screen a person handed back.
const takeoverSettle = 2 * time.Second

func (r *run) parkTimeout() time.Duration {
	if r.o.ParkTimeout <= 0 {
		return DefaultParkTimeout
	}
	return r.o.ParkTimeout
}

// park hands the session to a person when e escalates and the run parks
// (Options.Park): the surface stays open and the run keeps its position,
// outputs and effects. It returns the step to go on at and true once a
// person resumed the session, or false when the run ends with e (not
// parked, or not resumed in time: e's message then says so).
func (r *run) park(ctx context.Context, i int, e *end) (int, bool) {
	if r.o.Park == nil || r.parent != nil || e == nil || e.status != domain.StatusFailed || !r.c.Escalation.Escalates(e.code) {
		return i, false
	}
	st := &r.c.Steps[i]
	r.rec.Steps = append(r.rec.Steps, domain.StepResult{ID: st.ID, Action: st.Action, Status: "interrupted",
		Failure: e.code, Message: "parked for a person: " + e.msg})
	before, _ := r.disp.Observe(ctx) // the screen handed over, for the delta
	r.rt.ParkScreenshot(ctx, r.disp, st.ID)
	timeout := r.parkTimeout()
	pctx, cancel := context.WithTimeout(ctx, timeout)
	pl := &planner{r: r, i: i, code: e.code}
	err := r.o.Park.Park(pctx, runtime.Parked{Plan: pl.plan,
		Waiting: hitl.Waiting{SessionID: r.rt.ID, RunID: r.rt.ID, Capability: r.c.Ref(), Step: st.ID,
			FailureCode: e.code, Effects: r.eff.summary(), Summary: r.o.Redactor.String(e.msg)},
		Run: r.rt, Surface: r.o.Surface, Holder: r.disp.Holder(), Epoch: r.disp.Epoch(),
		Domains: r.rt.Domains(r.c.Policy.AllowedDomains), EntryOrigin: r.rt.EntryOrigin(),
	})
	cancel()
	pl.end() // no plan observes the surface once the run takes it back
	if err != nil {
		e.msg = fmt.Sprintf("%s; parked for a person, not resumed within %s", e.msg, timeout)
		return i, false
	}
	if _, err := r.disp.TakeBack(); err != nil {
		*e = *errEnd(err)
		return i, false
	}
	return r.afterTakeover(ctx, i, before), true
}

// afterTakeover re-observes the screen a person handed back, records what
// the person changed since before (a human_delta event), and picks the
// step to go on at: after the last step (from i on) whose postcondition
// already holds. The steps before it were done by the person: they are
// recorded as landed, their effects confirmed, and never dispatched again.
// With no such step the run goes on at i, whose expectation the step loop
// checks again (failing closed on a screen it does not know).
func (r *run) afterTakeover(ctx context.Context, i int, before *domain.UiSnapshot) int {
	done := func(s *domain.UiSnapshot) int { return r.doneThrough(s, i) }
	// A page the person's last gesture loads may still be on its way: wait
	// a moment for the screen to show a step done before judging it.
	exp := expectation{name: "the screen after the takeover", check: func(s *domain.UiSnapshot) (bool, domain.FailureCode, string) {
		if done(s) > i {
			return true, "", ""
		}
		return false, domain.CodeUnexpectedState, "no step after the takeover is done"
	}}
	v := r.settle(ctx, exp, min(r.o.StepWait, takeoverSettle))
	snap := v.snap
	if snap == nil {
		var err error
		if snap, err = r.disp.Observe(ctx); err != nil {
			return i
		}
	}
	r.emit(r.c.Steps[i].ID, humanDelta(before, snap))
	next := done(snap)
	for j := i; j < next; j++ {
		st := &r.c.Steps[j]
		r.sent[j] = false
		res := domain.StepResult{ID: r.stepName(st.ID), Action: st.Action, Status: "landed",
			Message: "done by the operator during the takeover: not repeated"}
		if risk := stepRisk(st); risk.Rank() >= domain.RiskElevated.Rank() {
			r.eff.set(res.ID, risk, domain.EffectConfirmed)
			res.Risk, res.Effect = risk, domain.EffectConfirmed
		}
		r.rec.Steps = append(r.rec.Steps, res)
	}
	return next
}

// doneThrough is the step a run parked at step i goes on at on screen s:
// after the last step (from i on) whose postcondition already holds, or i
// when none does.
func (r *run) doneThrough(s *domain.UiSnapshot, i int) int {
	next := i
	for j := i; j < len(r.c.Steps); j++ {
		st := &r.c.Steps[j]
		if st.Postcondition != nil && st.Action != domain.ActAssert && evalTrue(s, st.Postcondition) {
			next = j + 1
		}
	}
	return next
}

// checkpointBefore is the last checkpoint step before next, or last when
// none of the steps a takeover skipped is one.
func (r *run) checkpointBefore(next, last int) int {
	for j := last + 1; j < next && j < len(r.c.Steps); j++ {
		if r.c.Steps[j].Checkpoint {
			last = j
		}
	}
	return last
}
