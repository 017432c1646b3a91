package heal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/targeting"
)

// setAside are names of controls that never stand in for another one: they
// clear, cancel, close or leave, whatever the step did.
var setAside = []string{"clear", "reset", "cancel", "close", "back", "help", "no thanks", "delete", "remove", "sign out", "log out"}

// Find returns the one node of h's screen that the halted step's target
// should name, and why it is the only one; ok is false (with the reason)
// when there is none or more than one. Rules, in order:
//
//   - a templated name ({input.NAME}) is never healed;
//   - two or more nodes of the step's role and scope with the step's own
//     name (a duplicated label) are never healed;
//   - the candidates are the visible, enabled nodes of the step's role in
//     its scope that also satisfy its anchor;
//   - a candidate named like another step's target, or like a control that
//     clears, cancels, closes or leaves, is set aside;
//   - exactly one must be left.
func Find(h replay.Halt) (Candidate, string, []string, bool) {
	d, s := h.Target, h.Snapshot
	if s == nil {
		return Candidate{}, "no screen", nil, false
	}
	base := h.Capability.Capability.Step(h.Step)
	if base == nil || base.Target == nil {
		return Candidate{}, "the step has no target", nil, false
	}
	if base.Target.Name != nil && base.Target.Name.Input != "" || d.Name != nil && base.Target.Name != nil && d.Name.Value != base.Target.Name.Value {
		return Candidate{}, "the step's name takes an input; a templated name is never healed", nil, false
	}
	inScope := scoped(s, d)
	if d.Name != nil {
		var same []string
		for _, i := range inScope {
			if perception.FoldEqual(s.Nodes[i].Name, perception.Fold(d.Name.Value)) {
				same = append(same, s.Nodes[i].Path)
			}
		}
		if len(same) > 1 {
			return Candidate{}, fmt.Sprintf("%d nodes carry the step's own name %q (%s): a duplicated label is never healed",
				len(same), d.Name.Value, strings.Join(same, ", ")), nil, false
		}
	}
	others := otherNames(h.Capability.Capability, h.Step)
	var left []int
	var considered []string
	for _, i := range inScope {
		n := &s.Nodes[i]
		folded := perception.Fold(n.Name)
		switch {
		case n.Name == "":
			considered = append(considered, fmt.Sprintf("%s (no name): set aside", n.Path))
		case slices.Contains(setAside, folded):
			considered = append(considered, fmt.Sprintf("%s %q: set aside, it clears, cancels, closes or leaves", n.Path, n.Name))
		case slices.Contains(others, folded):
			considered = append(considered, fmt.Sprintf("%s %q: set aside, another step's target", n.Path, n.Name))
		default:
			left = append(left, i)
		}
	}
	switch len(left) {
	case 0:
		return Candidate{}, fmt.Sprintf("no node of role %s in the step's scope is left", d.Role), considered, false
	case 1:
	default:
		var names []string
		for _, i := range left {
			names = append(names, strconv.Quote(s.Nodes[i].Name))
		}
		return Candidate{}, fmt.Sprintf("%d candidates are left (%s): not unique", len(left), strings.Join(names, ", ")), considered, false
	}
	n := &s.Nodes[left[0]]
	c := Candidate{Path: n.Path, Role: n.Role, Name: n.Name, Frame: n.Frame, Region: n.Region}
	why := fmt.Sprintf("the only visible, enabled %s in %s that satisfies the step's scope and anchor once %d other(s) are set aside; its identity check is judged by eval",
		n.Role, where(d), len(considered))
	return c, why, considered, true
}

func where(d domain.TargetDescriptor) string {
	if d.Scope != nil && d.Scope.Frame != "" {
		return "frame " + strconv.Quote(d.Scope.Frame)
	}
	return "the page"
}

// scoped returns the visible, enabled nodes of d's role in d's scope that
// satisfy d's anchor, whatever their name.
func scoped(s *domain.UiSnapshot, d domain.TargetDescriptor) []int {
	role := perception.CanonicalRole(d.Role)
	probe := domain.TargetDescriptor{Role: d.Role, Scope: d.Scope, Anchor: d.Anchor}
	var anchored map[int]bool
	if d.Anchor != nil {
		anchored = map[int]bool{}
		for k := 1; k <= len(s.Nodes); k++ {
			probe.Ordinal = &k
			rs, err := targeting.Resolve(s, probe)
			if err != nil || rs.Node < 0 {
				break
			}
			anchored[rs.Node] = true
		}
	}
	var out []int
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.States.Hidden || n.States.Disabled || (role != "" && n.Role != role) {
			continue
		}
		if d.Scope != nil && d.Scope.Frame != "" && n.Frame != d.Scope.Frame && !strings.HasSuffix(n.Frame, "/"+d.Scope.Frame) {
			continue
		}
		if d.Scope != nil && d.Scope.Region != "" && !perception.FoldEqual(n.Region, perception.Fold(d.Scope.Region)) {
			continue
		}
		if anchored != nil && !anchored[i] {
			continue
		}
		out = append(out, i)
	}
	return out
}

// otherNames are the folded target names of every other step.
func otherNames(c *domain.Capability, step string) []string {
	var out []string
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.ID != step && st.Target != nil && st.Target.Name != nil {
			out = append(out, perception.Fold(st.Target.Name.Value))
		}
	}
	return out
}

// Draft returns base with version next and step's target named name (its
// match mode, scope, anchor, hints and ordinal kept), sealed, and its JSON.
func Draft(ctx context.Context, base *domain.Capability, next, step, name string) (*capability.Loaded, []byte, error) {
	raw, err := json.Marshal(base)
	if err != nil {
		return nil, nil, fmt.Errorf("draft %s: %w", base.Ref(), err)
	}
	c := new(domain.Capability)
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, nil, fmt.Errorf("draft %s: %w", base.Ref(), err)
	}
	st := c.Step(step)
	if st == nil || st.Target == nil {
		return nil, nil, fmt.Errorf("draft %s: step %s has no target", base.Ref(), step)
	}
	match := domain.MatchExact
	if st.Target.Name != nil && st.Target.Name.Match == domain.MatchNormalized {
		match = domain.MatchNormalized
	}
	st.Target.Name = &domain.NameMatch{Value: name, Match: match}
	c.Version, c.ContentHash = next, ""
	if c.ContentHash, err = capability.HashContext(ctx, c); err != nil {
		return nil, nil, fmt.Errorf("draft %s@%s: %w", c.ID, next, err)
	}
	body, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("draft %s@%s: %w", c.ID, next, err)
	}
	body = append(body, '\n')
	l, err := capability.ParseContext(ctx, c.Ref(), body)
	if err != nil {
		return nil, nil, fmt.Errorf("draft %s@%s does not load: %w", c.ID, next, err)
	}
	return l, body, nil
}

// NextPatch returns v with its patch number raised by one ("1.2.0" ->
// "1.2.1"), dropping any pre-release or build part.
func NextPatch(v string) (string, error) {
	core, _, _ := strings.Cut(v, "+")
	core, _, _ = strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", v)
	}
	p, err := strconv.Atoi(parts[2])
	if err != nil {
		return "", fmt.Errorf("version %q: patch %q is not a number", v, parts[2])
	}
	return fmt.Sprintf("%s.%s.%d", parts[0], parts[1], p+1), nil
}
