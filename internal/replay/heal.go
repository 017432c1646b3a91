package replay

import (
	"context"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// Halt is a top-level step that a run stopped at because its target was
// not found (TARGET_NOT_FOUND) or not unique (TARGET_AMBIGUOUS), with the
// screen it stopped on. The run stays halted whatever a [Proposer] makes of
// it: a heal proposal is for a next version, never for this run.
type Halt struct {
	RunID string
	// Capability is the capability the run was given (unbound: its
	// descriptors still carry their {input.NAME} placeholders).
	Capability *capability.Loaded
	// Inputs are the run's bound inputs.
	Inputs map[string]any
	// Step is the halted step's id; Target its descriptor as resolved
	// (placeholders bound).
	Step   string
	Target domain.TargetDescriptor
	Code   domain.FailureCode
	// Message is the resolution's failure message.
	Message string
	// Snapshot is the screen the step halted on.
	Snapshot *domain.UiSnapshot
	// StepNumber is the halted step's position in the run record (1-based),
	// which names its screenshot in the run's evidence.
	StepNumber int
}

// Proposer is told about each halt a [Halt] describes. It returns a short
// note for the run's evidence (heal.jsonl) or nil when it proposed nothing.
// It must not act on the surface, and the run's outcome never depends on it.
type Proposer interface {
	Halted(ctx context.Context, h Halt) any
}

// proposeHeal hands a halted top-level step to the run's Proposer, and
// writes what it proposed into the run's evidence.
func (r *run) proposeHeal(ctx context.Context, st *domain.Step, v verdict) {
	if r.o.Proposer == nil || r.parent != nil || st.Target == nil || v.snap == nil {
		return
	}
	if v.code != domain.CodeTargetNotFound && v.code != domain.CodeTargetAmbiguous {
		return
	}
	note := r.o.Proposer.Halted(ctx, Halt{
		RunID: r.o.RunID, Capability: r.o.Capability, Inputs: r.inputs, Step: st.ID, Target: *st.Target,
		Code: v.code, Message: v.msg, Snapshot: v.snap, StepNumber: len(r.rec.Steps),
	})
	if note == nil {
		return
	}
	if err := r.rt.AppendLine("heal.jsonl", note); err != nil {
		r.o.Logger.WarnContext(ctx, "heal note not written", "run_id", r.o.RunID, "error", err)
	}
}
