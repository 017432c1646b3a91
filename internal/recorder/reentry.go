package recorder

import (
	"errors"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/targeting"
)

// proposeReentry proposes a reentry when [Options.FinalScreen], the screen
// the discovery run ended on, is one the workflow could start again from:
// the earliest step S (after any sign-on steps, at or before the first step
// that enters an input, before the first extraction) that could start on
// that screen as replay judges it (see startsOn) becomes reentry
// {step: S, when: node_exists S's target}. The proposal is kept only when
// the capability validator admits it (it needs an identity check judged
// from S on, and no unsafe, gated or extracting step before S); otherwise
// a note gives the validator's reasons. Either way a note says what was
// decided. c must have its defaults applied.
func (k *compiler) proposeReentry() {
	screen := k.opts.FinalScreen
	if screen == nil {
		return
	}
	c := k.c
	at, when := k.reentryCandidate(screen)
	if at < 0 {
		k.note("no reentry proposed: the screen the discovery run ended on shows the target of no step a run could start again at")
		return
	}
	id := c.Steps[at].ID
	c.Reentry = &domain.Reentry{Step: id, When: *when}
	if problems := reentryProblems(c); len(problems) > 0 {
		c.Reentry = nil
		k.note("no reentry proposed at step %s, although the screen the discovery run ended on shows its target %s: the validator refuses it: %s",
			id, describeTarget(when.NodeExists), strings.Join(problems, "; "))
		return
	}
	k.note("reentry proposed at step %s: the discovery run ended on a screen showing its target %s, so a run on a warm session showing it starts there instead of at the entrypoint; a reviewer must confirm that a run can start again on that screen before sealing",
		id, describeTarget(when.NodeExists))
}

// reentryCandidate returns the index of the earliest step a run could
// start again at on screen, and the condition that says so, or -1.
func (k *compiler) reentryCandidate(screen *domain.UiSnapshot) (int, *domain.Predicate) {
	steps := k.c.Steps
	from := 0
	for i := range steps {
		if k.signsOn(&steps[i]) {
			from = i + 1
		}
	}
	if from > 0 && from < len(steps) && (steps[from].Action == domain.ActClick || steps[from].Action == domain.ActPressKey) {
		from++ // the step submitting the credentials signs on too
	}
	for i := from; i < len(steps); i++ {
		s := &steps[i]
		if s.Action == domain.ActExtract {
			break // a reentered run must read every output again
		}
		if when := k.reentryCondition(s); when != nil && startsOn(screen, s, when) {
			return i, when
		}
		if s.Value != nil && s.Value.Input != "" {
			break // a reentered run must enter every input again
		}
	}
	return -1, nil
}

// reentryCondition is the screen step s can start from: its target is
// shown. It is nil for a step without a target, or whose target is built
// from an input (its value differs on every run).
func (k *compiler) reentryCondition(s *domain.Step) *domain.Predicate {
	if s.Target == nil || s.Target.Name != nil && s.Target.Name.Input != "" {
		return nil
	}
	t := clone(*s.Target)
	t.Hints, t.RecordedStrategy = nil, ""
	p := &domain.Predicate{NodeExists: &t}
	if k.mentionsInput(p) != "" {
		return nil
	}
	return p
}

// startsOn reports whether step s could start on screen as replay judges
// a reentry: the condition when holds, and so does the step's own
// expectation (its precondition, if any, and its target resolving to
// exactly one node).
func startsOn(screen *domain.UiSnapshot, s *domain.Step, when *domain.Predicate) bool {
	for _, p := range []*domain.Predicate{when, s.Precondition} {
		if p == nil {
			continue
		}
		if ok, err := targeting.Eval(screen, p); err != nil || !ok {
			return false
		}
	}
	_, err := targeting.Resolve(screen, *s.Target)
	return err == nil
}

// signsOn reports whether s is part of a sign-on: it enters a secret or a
// sensitive input. The click or key press right after the last such step
// submits them and belongs to the sign-on as well.
func (k *compiler) signsOn(s *domain.Step) bool {
	v := s.Value
	if v == nil {
		return false
	}
	if v.Secret != "" {
		return true
	}
	in := k.c.Input(v.Input)
	return v.Input != "" && in != nil && in.Sensitive
}

// reentryProblems validates c with the real validator (marshal, then
// capability.Parse) and returns its problems with the reentry, as
// "path: message"; none when c validates or when only other fields are at
// fault (Compile's final check reports those).
func reentryProblems(c *domain.Capability) []string {
	data, err := Marshal(c, nil)
	if err != nil {
		return nil
	}
	_, err = capability.Parse(c.ID+".yaml", data)
	var inv *capability.InvalidError
	if !errors.As(err, &inv) {
		return nil
	}
	var out []string
	for _, p := range inv.Problems {
		if p.Path == "reentry" || strings.HasPrefix(p.Path, "reentry.") {
			out = append(out, p.Path+": "+p.Message)
		}
	}
	return out
}
