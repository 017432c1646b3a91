package runtime

import (
	"context"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/surface"
)

// Parked is a run handed to a person: why it waits, and the live session
// (surface, run, lease) a console needs to let an operator act on it. The
// run does not act while it is parked.
type Parked struct {
	Waiting hitl.Waiting
	Run     *Run
	Surface surface.Surface
	// Holder and Epoch are the automation's lease at the moment it parks.
	Holder string
	Epoch  uint64
	// Domains and EntryOrigin are the run's allowlist and entry origin,
	// for the operator's HUMAN policy.
	Domains     []string
	EntryOrigin string
	// Plan, when set, tells what the run will do if resumed now, judged
	// on a fresh observation of the screen (see [ResumePlan]). The parker
	// calls it while nobody acts on the surface.
	Plan func(ctx context.Context) (ResumePlan, error)
}

// ResumePlan is what a parked run will do when it is resumed, computed by
// the engine from the screen as it is now: the steps it will not repeat
// (their postcondition holds), the step it goes on at, the elevated and
// irreversible steps still ahead with whether the run may send them, and
// why resuming now would fail (Blocked; empty when it would not).
type ResumePlan struct {
	// ParkedAt is the step the run parked at.
	ParkedAt string `json:"parked_at"`
	// Skip lists the steps done already: recorded as landed, not sent.
	Skip []string `json:"skip,omitempty"`
	// ResumeAt is the step the run goes on at; empty when every step is
	// done and only the run's results are left to read.
	ResumeAt string `json:"resume_at,omitempty"`
	// Ahead lists the elevated and irreversible steps from ResumeAt on.
	Ahead []PlanStep `json:"ahead,omitempty"`
	// Dialog is the message of a dialog open on the screen, redacted.
	Dialog string `json:"dialog,omitempty"`
	// Blocked says, one reason each, why resuming now would fail or only
	// park again.
	Blocked []string `json:"blocked,omitempty"`
}

// PlanStep is one elevated or irreversible step ahead of a resumed run.
type PlanStep struct {
	Step string      `json:"step"`
	Risk domain.Risk `json:"risk"`
	// Reached is false when an unreleased gate before it parks the run
	// again first.
	Reached bool `json:"reached"`
	// Authorized says whether this run may send it (irreversible: the
	// run's --allow-irreversible and approval; elevated: always).
	Authorized bool `json:"authorized"`
	// Why is the policy's refusal when it is not authorized.
	Why string `json:"why,omitempty"`
}

// Parker holds a parked run until a person resumes it. Park escalates the
// session (RUNNING → PAUSED) and blocks; it returns nil once the session is
// RESUMING, or an error when it was not resumed (its timeout, ctx), after
// which the session is offered to nobody. Implementations are safe for
// concurrent use by many runs.
type Parker interface {
	Park(ctx context.Context, p Parked) error
}

// TakeBack moves a resumed session back to RUNNING for the dispatcher's
// holder and rebinds the dispatcher to the new epoch.
func (d *Dispatcher) TakeBack() (uint64, error) {
	if _, err := d.lease.Run(d.holder); err != nil {
		return d.epoch, err
	}
	return d.Rebind()
}
