package replay

import (
	"context"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
)

// evidenceLevel is the level a run keeps (domain.Capability.EvidenceFor
// of Options.EvidenceLevel), decisive when the override is refused: the
// refusal itself ends the run before its first dispatch
// (refuseEvidence).
func evidenceLevel(c *domain.Capability, override domain.EvidenceLevel) domain.EvidenceLevel {
	l, err := c.EvidenceFor(override)
	if err != nil {
		return domain.EvidenceDecisive
	}
	return l
}

// refuseEvidence refuses, before anything is sent, a run whose
// Options.EvidenceLevel its capability does not allow (none for one that is
// not read-only).
func (r *run) refuseEvidence() *end {
	if _, err := r.c.EvidenceFor(r.o.EvidenceLevel); err != nil {
		return r.refuse(evidence.CheckEvidence, errEnd(err))
	}
	return nil
}

// stepEvidence fills a step_finished event's evidence: the digest and
// summary of the screen the step left (every level), and its masked
// screenshot when the run's level keeps it. The engine's reason: an
// output read from it (a step of the run itself, not of a prerequisite or
// read-back), an elevated or irreversible step that acted, or a step that
// failed (the screen the run stopped on, which EndScreenshot then does not
// picture again).
func (r *run) stepEvidence(ctx context.Context, ev *evidence.StepFinished, res domain.StepResult, e *end) {
	reason := ""
	switch {
	case e != nil:
		reason = evidence.ReasonFailure
	case res.Risk.Rank() >= domain.RiskElevated.Rank() && res.Effect != "":
		reason = evidence.ReasonAfterElevated
	case res.Action == domain.ActExtract && r.parent == nil && res.Status == "ok":
		reason = evidence.ReasonOutput
	}
	ev.Screenshot = r.rt.StepScreenshot(ctx, r.disp, len(r.rec.Steps), res.ID, reason)
	obs := r.rt.StepObservation(ctx, r.disp)
	ev.ObservationSHA256, ev.Observation = obs.SHA256, obs.Summary
}

// endEvidence pictures the screen the run ended on (runtime.Run
// EndScreenshot), unless it was refused before its first dispatch.
func (r *run) endEvidence(ctx context.Context) {
	if r.disp == nil || r.refused {
		return
	}
	r.rt.EndScreenshot(ctx, r.disp, r.rec.Status)
}
