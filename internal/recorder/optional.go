package recorder

import (
	"encoding/json"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// optionalSteps makes a step optional when [Options.Others] shows it only
// in some runs: a safe step with a target that some other trace never
// acted on (no successful step of the same action on the same target)
// gets when: node_exists its target. A step whose target names an input
// ({input.NAME}) is matched by role, scope and anchor relation only, since
// other runs name other records. An extraction, a step above safe risk
// and a step without a target are left as they are, with a note.
func (k *compiler) optionalSteps() {
	if len(k.opts.Others) == 0 {
		return
	}
	for i := range k.c.Steps {
		st := &k.c.Steps[i]
		missing := 0
		for _, o := range k.opts.Others {
			if o != nil && !actedOn(o, st) {
				missing++
			}
		}
		if missing == 0 || st.When != nil {
			continue
		}
		switch {
		case st.Target == nil:
			k.note("step %s does not appear in %d of the %d other runs, and has no target to judge it by: check whether it is optional", st.ID, missing, len(k.opts.Others))
		case st.Action == domain.ActExtract || st.Into != "":
			k.note("step %s reads an output but does not appear in %d of the %d other runs: check the workflow", st.ID, missing, len(k.opts.Others))
		case st.Risk != "" && st.Risk != domain.RiskSafe:
			k.note("step %s is %s and does not appear in %d of the %d other runs: it was not made optional; check the workflow", st.ID, st.Risk, missing, len(k.opts.Others))
		default:
			st.When = &domain.Predicate{NodeExists: ptr(clone(*st.Target))}
			st.When.NodeExists.RecordedStrategy = ""
			k.note("step %s does not appear in %d of the %d other runs: it is optional (when its target is showing); check that the screen it acts on appears only sometimes", st.ID, missing, len(k.opts.Others))
		}
	}
}

// actedOn reports whether trace t holds a successful step of st's action
// on st's target.
func actedOn(t *domain.Trace, st *domain.Step) bool {
	for _, ts := range t.Steps {
		if ts.Verdict != verdictOK || ts.Action.Type != st.Action {
			continue
		}
		target := ts.Target
		if target == nil {
			target = ts.Action.Target
		}
		if sameTarget(st.Target, target, st.Action == domain.ActExtract) {
			return true
		}
	}
	return false
}

// sameTarget compares a compiled target with a trace's: by role, name,
// scope and anchor, or, when loose (an extraction, whose name the compiler
// may drop) or the compiled one names an input, by role, scope and anchor
// relation.
func sameTarget(compiled, traced *domain.TargetDescriptor, loose bool) bool {
	if compiled == nil || traced == nil {
		return compiled == traced
	}
	key := func(t *domain.TargetDescriptor, loose bool) string {
		c := clone(*t)
		c.RecordedStrategy, c.Hints, c.Ordinal = "", nil, nil
		if c.Name != nil && c.Name.Match == "" {
			c.Name.Match = domain.MatchExact
		}
		if loose {
			c.Name = nil
			if c.Anchor != nil {
				c.Anchor.Text = ""
			}
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
	b, _ := json.Marshal(compiled)
	loose = loose || strings.Contains(string(b), "{input.") || (compiled.Name != nil && compiled.Name.Input != "")
	return key(compiled, loose) == key(traced, loose)
}
