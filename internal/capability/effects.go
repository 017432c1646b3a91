package capability

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cuahq/cua/internal/domain"
)

// effects checks every step's effect contracts (issue 26): only elevated
// or irreversible steps declare them; the read-back is another capability
// (id@version, pinned at seal); its inputs are this capability's inputs or
// literals; match names at least one column, each by an input, a declared
// output or a literal (never a secret).
func (v *semantic) effects() {
	for i := range v.c.Steps {
		s := &v.c.Steps[i]
		for j := range s.Effects {
			p := func(f ...any) string {
				return pointer(append([]any{"steps", i, "effects", j}, f...)...)
			}
			if s.Risk != domain.RiskElevated && s.Risk != domain.RiskIrreversible {
				v.add(p(), "an effect contract is only allowed on an elevated or irreversible step (risk is %s)", s.Risk)
			}
			rw := s.Effects[j].RecordWritten
			if rw == nil {
				v.add(p(), "an effect contract needs record_written")
				continue
			}
			v.recordWritten(rw, func(f ...any) string { return p(append([]any{"record_written"}, f...)...) })
		}
	}
}

func (v *semantic) recordWritten(rw *domain.RecordWritten, p func(f ...any) string) {
	if strings.SplitN(rw.Via, "@", 2)[0] == v.c.ID {
		v.add(p("via"), "a capability cannot read its effect back with itself")
	}
	v.capabilityRef(p("via"), rw.Via)
	if rw.Count < 0 {
		v.add(p("count"), "must be 0 or more (the expected change in matching rows)")
	}
	if rw.Others != nil && *rw.Others < 0 {
		v.add(p("others"), "must be 0 or more (the expected change in other rows)")
	}
	if len(rw.Match) == 0 {
		v.add(p("match"), "needs at least one column to match")
	}
	for _, name := range sortedKeys(rw.Inputs) {
		val := rw.Inputs[name]
		v.effectValue(p("inputs", name), &val, false)
	}
	for _, col := range sortedKeys(rw.Match) {
		if strings.TrimSpace(col) == "" {
			v.add(p("match"), "a column header must not be empty")
		}
		val := rw.Match[col]
		v.effectValue(p("match", col), &val, true)
	}
}

// effectValue checks one value of a contract: an input must be declared, an
// output (allowed in match only) must be a declared output, a secret is
// never allowed (a read-back's evidence must not depend on one).
func (v *semantic) effectValue(ptr string, val *domain.ValueExpr, outputOK bool) {
	switch val.Kind() {
	case "input":
		if _, ok := v.inputIdx[val.Input]; !ok {
			v.add(ptr+pointer("$input"), "undeclared input %q", val.Input)
		}
	case "output":
		if !outputOK {
			v.add(ptr+pointer("$output"), "a read-back's inputs are known before the run: use $input or a literal")
		} else if _, ok := v.outputIdx[val.Output]; !ok {
			v.add(ptr+pointer("$output"), "undeclared output %q", val.Output)
		}
	case "secret":
		v.add(ptr+pointer("$secret"), "a secret cannot be part of an effect contract")
	case "literal":
	default:
		v.add(ptr, "set exactly one of $input, $output or literal")
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ReadOnlyProblem says why c may not serve as an effect contract's
// read-back, or "" when it may. A read-back runs in the caller's session
// after the write, so it must change nothing: its risk and every step's is
// safe, no step is gated or declares effects, no step types, selects,
// presses a key or sends raw input, a click targets a link (navigation)
// only, and it runs no other capability (no prerequisites, no
// run_capability remedy: the caller's session is signed on already).
func ReadOnlyProblem(c *domain.Capability) string {
	if c.Risk != "" && c.Risk != domain.RiskSafe {
		return fmt.Sprintf("its risk is %s, not safe", c.Risk)
	}
	if len(c.Prerequisites) > 0 || len(Calls(c)) > 0 {
		return "it runs other capabilities (prerequisites, run_capability remedies or effect read-backs)"
	}
	for _, s := range c.Steps {
		switch {
		case s.Risk != "" && s.Risk != domain.RiskSafe:
			return fmt.Sprintf("step %s has risk %s, not safe", s.ID, s.Risk)
		case s.Gate:
			return fmt.Sprintf("step %s is gated", s.ID)
		case s.Action == domain.ActClick && (s.Target == nil || s.Target.Role != "link"):
			return fmt.Sprintf("step %s clicks something other than a link", s.ID)
		case s.Action != domain.ActClick && s.Action.Mutates():
			return fmt.Sprintf("step %s %ss, which may change the application", s.ID, s.Action)
		}
	}
	return ""
}

// readBackCalls lists the read-back of every effect contract of c.
func readBackCalls(c *domain.Capability) []Call {
	var out []Call
	for i := range c.Steps {
		for j, e := range c.Steps[i].Effects {
			if e.RecordWritten == nil {
				continue
			}
			out = append(out, Call{Field: fmt.Sprintf("steps[%d].effects[%d].record_written.via", i, j),
				Ref: e.RecordWritten.Via, Pin: e.RecordWritten.ContentHash, ReadBack: true})
		}
	}
	return out
}

// readBackPinSites finds the via: of every steps[i].effects[j].record_written
// mapping of the document top and says how to pin it, like a prerequisite.
func readBackPinSites(top *yaml.Node, lines []string, resolve Resolver) ([]pinSite, error) {
	steps := mapValue(top, "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode {
		return nil, nil
	}
	var out []pinSite
	for i, st := range steps.Content {
		if st.Kind != yaml.MappingNode {
			continue
		}
		effs := mapValue(st, "effects")
		if effs == nil || effs.Kind != yaml.SequenceNode {
			continue
		}
		for j, e := range effs.Content {
			if e.Kind != yaml.MappingNode {
				continue
			}
			rw := mapValue(e, "record_written")
			if rw == nil {
				continue
			}
			s, ok, err := pinSiteFor(fmt.Sprintf("steps[%d].effects[%d].record_written.via", i, j), false, "via", rw, lines, resolve)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, s)
			}
		}
	}
	return out, nil
}
