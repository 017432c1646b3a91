package replay

import (
	"context"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// A capability run in place (a prerequisite, or a run_capability remedy)
// judges screens with its own rules only: a sign-on knows nothing of its
// caller's session_expired. When it fails on a screen it did not recognise,
// that screen is handed back to the caller, whose outcomes and recovery
// rules judge it as they judge every other screen; only when none of them
// matches does the sub-run's failure end the run, as it is.

// handsBack reports whether a sub-run's end is a failure of recognition:
// the screen was not what its steps, targets or checkpoint expected. A
// declared result of its own (an outcome, PREREQUISITE_FAILED: the sign-on
// refused the credentials), a rule of its own exhausted, and anything
// about the run rather than the screen (lease, policy, budget, time,
// surface, inputs, secrets) are never handed back.
func handsBack(e *end) bool {
	if e == nil || e.status != domain.StatusFailed || e.recoverWith != nil {
		return false
	}
	switch e.code {
	case domain.CodeUnexpectedState, domain.CodeCheckpointFailed, domain.CodeTargetNotFound, domain.CodeTargetAmbiguous:
		return true
	}
	return false
}

// afterSubFailure is what a prerequisite's failure e becomes: nil when one
// of r's recovery rules matched the screen and its remedy ran, the
// business outcome when one of r's outcomes matched, the remedy's own end
// when it failed (RECOVERY_EXHAUSTED past the rule's max_attempts), and e
// itself when nothing of r's matched or e is not to be handed back.
func (r *run) afterSubFailure(ctx context.Context, e *end) *end {
	if je, judged := r.judgeHandBack(ctx, e); judged {
		return je
	}
	return e
}

// judgeHandBack observes the screen a sub-run failed on (e, handed back)
// and judges it with r's outcomes and recovery rules, in that order, as
// classify does (a prerequisite's when is not consulted: the prerequisite
// just ran and failed on this screen). It reports judged false when e is
// not to be handed back, the screen cannot be observed, or nothing of r's
// matches; else it returns what the run does next (nil: recovered).
func (r *run) judgeHandBack(ctx context.Context, e *end) (*end, bool) {
	if e == nil || !e.handBack || ctx.Err() != nil {
		return e, false
	}
	snap, err := r.disp.Observe(ctx)
	if err != nil {
		return e, false
	}
	r.noteSnapshot(snap)
	if r.undeclaredModal(snap) != "" {
		// A dialog neither run declared is open: the screen is unknown to
		// both, so the sub-run's failure stands and nothing is touched
		// (a recovery rule matching what shows behind it must not act).
		return e, false
	}
	v := r.classify(snap, expectation{name: "the screen a capability run in place failed on",
		check: func(*domain.UiSnapshot) (bool, domain.FailureCode, string) { return false, e.code, e.msg }})
	switch v.kind {
	case vOutcome:
		return &end{status: domain.StatusBusinessOutcome, outcome: v.outcome}, true
	case vRecovery:
		r.o.Logger.Info("a capability run in place failed; the caller's recovery rule matches its screen",
			"capability", r.c.Ref(), "rule", v.rule.ID, "failure", string(e.code))
		re := r.recover(ctx, v.rule)
		if re != nil && re.code == domain.CodeRecoveryExhausted && !strings.Contains(re.msg, e.msg) {
			// The innermost hand-back names what kept failing, once.
			re.msg += "; it failed last as " + e.msg
		}
		return re, true
	}
	return e, false
}
