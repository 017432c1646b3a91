package runtime

import (
	"context"

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
