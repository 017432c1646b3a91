package replay

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
)

// effectLog tracks the effect of every elevated or irreversible step of a
// run and its sub-runs, in the order they were declared or first sent
// (DESIGN invariant 13).
type effectLog struct {
	steps []domain.StepEffect
}

func (l *effectLog) find(step string) *domain.StepEffect {
	for i := range l.steps {
		if l.steps[i].Step == step {
			return &l.steps[i]
		}
	}
	return nil
}

// declare lists a step as not sent yet, when its risk is elevated or more.
func (l *effectLog) declare(step string, risk domain.Risk) {
	if risk.Rank() < domain.RiskElevated.Rank() || l.find(step) != nil {
		return
	}
	l.steps = append(l.steps, domain.StepEffect{Step: step, Risk: risk, Effect: domain.EffectNotSent})
}

// set moves a step's effect; a confirmed effect is never downgraded, and a
// sent one never goes back to not_sent.
func (l *effectLog) set(step string, risk domain.Risk, e domain.Effect) {
	l.declare(step, risk)
	se := l.find(step)
	if se == nil {
		return
	}
	se.Risk = domain.MaxRisk(se.Risk, risk)
	switch {
	case se.Effect == domain.EffectConfirmed:
	case se.Effect == domain.EffectSentUnconfirmed && e == domain.EffectNotSent:
	default:
		se.Effect = e
	}
}

// get returns a step's effect, "" when the step is not tracked.
func (l *effectLog) get(step string) domain.Effect {
	if se := l.find(step); se != nil {
		return se.Effect
	}
	return ""
}

// confirmAll marks every sent effect confirmed: the run ended on a declared
// result (its checkpoint or a business outcome) read after them.
func (l *effectLog) confirmAll() {
	for i := range l.steps {
		if l.steps[i].Effect == domain.EffectSentUnconfirmed {
			l.steps[i].Effect = domain.EffectConfirmed
		}
	}
}

// summary is the record's effects, nil when nothing is tracked.
func (l *effectLog) summary() *domain.Effects {
	if len(l.steps) == 0 {
		return nil
	}
	out := &domain.Effects{Steps: append([]domain.StepEffect(nil), l.steps...)}
	for _, se := range l.steps {
		out.Sent = out.Sent || se.Effect.Sent()
		out.Unconfirmed = out.Unconfirmed || se.Effect == domain.EffectSentUnconfirmed
	}
	return out
}

// unconfirmed returns the sent but unconfirmed steps, most severe first.
func (l *effectLog) unconfirmed() []domain.StepEffect {
	var irr, elev []domain.StepEffect
	for _, se := range l.steps {
		if se.Effect != domain.EffectSentUnconfirmed {
			continue
		}
		if se.Risk == domain.RiskIrreversible {
			irr = append(irr, se)
		} else {
			elev = append(elev, se)
		}
	}
	return append(irr, elev...)
}

// warning is the sentence a run's message leads with when an elevated or
// irreversible action was sent and its result was not read.
func (l *effectLog) warning() string {
	var un []domain.StepEffect
	for _, se := range l.unconfirmed() {
		// A read-back that verified or refuted the effect says so itself.
		if se.Verdict != domain.EffectVerified && se.Verdict != domain.EffectRefuted {
			un = append(un, se)
		}
	}
	if len(un) == 0 {
		return ""
	}
	names := make([]string, len(un))
	for i, se := range un {
		names[i] = fmt.Sprintf("%s (%s)", se.Step, se.Risk)
	}
	verb := "was"
	if len(un) > 1 {
		verb = "were"
	}
	return fmt.Sprintf("EFFECT SENT, UNCONFIRMED: step %s %s submitted and its confirmation was not read: do not re-run before checking the application",
		strings.Join(names, ", "), verb)
}

// sentBy reports whether a failed Act call may have reached the
// application: it did when the surface was called and the adapter did not
// say the node was gone before anything was sent.
func sentBy(err error, before, after int) domain.Effect {
	if err == nil {
		return domain.EffectSentUnconfirmed
	}
	if after == before || errors.Is(err, surface.ErrStale) || errors.Is(err, surface.ErrUnauthorized) ||
		errors.Is(err, surface.ErrResubmit) || errors.Is(err, surface.ErrUnsupported) {
		return domain.EffectNotSent
	}
	return domain.EffectSentUnconfirmed
}
