package replay

import (
	"context"
	"fmt"

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
	// Node is, for a drift ([DriftProposer]), the node of Snapshot the
	// target resolved to on a weaker rung than recorded (Strategy); -1 for
	// a halt.
	Node     int
	Strategy domain.Strategy
}

// DriftProposer is a [Proposer] that is also told about a top-level step
// whose target resolved on a weaker rung than its recorded strategy (the
// step went on). Its note goes to the run's evidence like a halt's.
type DriftProposer interface {
	Drifted(ctx context.Context, h Halt) any
}

// proposeDrift hands a drifted resolution of a top-level step to the run's
// Proposer when it is a DriftProposer.
func (r *run) proposeDrift(ctx context.Context, st *domain.Step, snap *domain.UiSnapshot, node int, strategy domain.Strategy) {
	dp, ok := r.o.Proposer.(DriftProposer)
	if !ok || r.parent != nil || st.Target == nil || snap == nil || node < 0 || node >= len(snap.Nodes) {
		return
	}
	r.writeHealNote(ctx, dp.Drifted(ctx, Halt{
		RunID: r.o.RunID, Capability: r.o.Capability, Inputs: r.inputs, Step: st.ID, Target: *st.Target,
		Message:  fmt.Sprintf("step %s resolved on %s, recorded %s", st.ID, strategy, st.Target.RecordedStrategy),
		Snapshot: snap, StepNumber: len(r.rec.Steps) + 1, Node: node, Strategy: strategy,
	}))
}

// writeHealNote writes a proposer's note into the run's evidence.
func (r *run) writeHealNote(ctx context.Context, note any) {
	if note == nil {
		return
	}
	if err := r.rt.AppendLine("heal.jsonl", note); err != nil {
		r.o.Logger.WarnContext(ctx, "heal note not written", "run_id", r.o.RunID, "error", err)
	}
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
	r.writeHealNote(ctx, r.o.Proposer.Halted(ctx, Halt{
		RunID: r.o.RunID, Capability: r.o.Capability, Inputs: r.inputs, Step: st.ID, Target: *st.Target,
		Code: v.code, Message: v.msg, Snapshot: v.snap, StepNumber: len(r.rec.Steps), Node: -1,
	}))
}
