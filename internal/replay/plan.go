package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/runtime"
)

// errPlanOver is a plan asked for after the parked run took its session
// back.
var errPlanOver = errors.New("the run is no longer parked")

// planner answers a parker's runtime.Parked.Plan for a run parked at step
// i with code: what resuming now would do, by the same rule afterTakeover
// applies once the run is resumed (doneThrough), and why it would fail.
type planner struct {
	r    *run
	i    int
	code domain.FailureCode

	mu   sync.Mutex
	over bool
}

// end stops answering: the run is about to use its session again.
func (p *planner) end() {
	p.mu.Lock()
	p.over = true
	p.mu.Unlock()
}

// plan observes the screen and returns the resume plan on it.
func (p *planner) plan(ctx context.Context) (runtime.ResumePlan, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over {
		return runtime.ResumePlan{}, errPlanOver
	}
	snap, err := p.r.disp.Observe(ctx)
	if err != nil {
		return runtime.ResumePlan{}, fmt.Errorf("resume plan: observe: %w", err)
	}
	return p.r.resumePlan(snap, p.i, p.code), nil
}

// resumePlan is the plan of a run parked at step i (with code) on screen
// snap. Resuming is blocked by an open dialog (the step after it would act
// on a screen it does not expect), by resuming at the gate the run parked
// at with nothing done (it would only park there again), and by an
// irreversible step ahead, before any unreleased gate, that this run may
// not send (it would end APPROVAL_REQUIRED).
func (r *run) resumePlan(snap *domain.UiSnapshot, i int, code domain.FailureCode) runtime.ResumePlan {
	steps := r.c.Steps
	out := runtime.ResumePlan{ParkedAt: steps[i].ID}
	next := r.doneThrough(snap, i)
	for j := i; j < next; j++ {
		out.Skip = append(out.Skip, steps[j].ID)
	}
	if next < len(steps) {
		out.ResumeAt = steps[next].ID
	}
	if snap.Dialog != nil {
		out.Dialog = r.o.Redactor.String(snap.Dialog.Message)
		out.Blocked = append(out.Blocked, fmt.Sprintf("a dialog is open (%q): answer it before resuming", out.Dialog))
	}
	if next == i && code == domain.CodeGateReached {
		out.Blocked = append(out.Blocked, fmt.Sprintf("the run parked at gate %s and the step is not done: resuming now only parks it at the same gate again; do the step (or release the gate with a reviewer) first", steps[i].ID))
	}
	reached := true
	for j := next; j < len(steps); j++ {
		st := &steps[j]
		if st.Gate && !slices.Contains(r.o.ReleasedGates, st.ID) {
			reached = false
		}
		risk := stepRisk(st)
		if risk.Rank() < domain.RiskElevated.Rank() {
			continue
		}
		ps := runtime.PlanStep{Step: st.ID, Risk: risk, Reached: reached, Authorized: true}
		if risk == domain.RiskIrreversible {
			if err := r.pol.CanAuthorizeIrreversible(); err != nil {
				ps.Authorized, ps.Why = false, denialText(err)
			}
		}
		if reached && !ps.Authorized {
			out.Blocked = append(out.Blocked, fmt.Sprintf("step %s ahead is irreversible and this run may not send it (%s): do it in the session first, or run with --allow-irreversible and an approval", st.ID, ps.Why))
		}
		out.Ahead = append(out.Ahead, ps)
	}
	return out
}
