package targeting

import (
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// maxAnchorTries bounds the anchor texts Synthesize tries per relation.
const maxAnchorTries = 8

// Synthesize returns the strongest descriptor that identifies node i of s
// (normalised) and nothing else. Descriptors are tried in this order, and
// each is kept only if [Resolve] on s returns node i:
//
//  1. role + exact name (+ Scope.Frame when the node is not in the top
//     document);
//  2. the same + Scope.Region;
//  3. the same (name or not) + an anchor: labelled_by the label or text
//     node right before it, row_of each other cell of its innermost row,
//     adjacent_to the nearest label or text node before it (each without,
//     then with, the region); for a named node the anchor narrows
//     several same-named candidates (the Edit button of the Savings row);
//  4. for an unnamed node, role + scope alone;
//  5. role (+ exact name) + scope + region, then without region, with the
//     node's ordinal among the candidates.
//
// The result's RecordedStrategy is the rung it resolved on, and Hints.CSS is
// the node's CSS when the descriptor still resolves to i with the hint (a
// hint can only ever decide for descriptors without name or anchor). It
// returns TARGET_NOT_FOUND for an index out of range or a hidden node, and
// TARGET_AMBIGUOUS when nothing unique can be built.
func Synthesize(s *domain.UiSnapshot, i int) (domain.TargetDescriptor, error) {
	if s == nil || i < 0 || i >= len(s.Nodes) {
		return domain.TargetDescriptor{}, domain.Errorf(domain.CodeTargetNotFound, "no node %d to describe", i)
	}
	n := &s.Nodes[i]
	if n.States.Hidden {
		return domain.TargetDescriptor{}, domain.Errorf(domain.CodeTargetNotFound, "node %s is hidden", n.Path)
	}
	scope := func(region bool) *domain.Scope {
		sc := &domain.Scope{Frame: n.Frame}
		if region {
			sc.Region = n.Region
		}
		if *sc == (domain.Scope{}) {
			return nil
		}
		return sc
	}
	var name *domain.NameMatch
	if n.Name != "" {
		name = &domain.NameMatch{Value: n.Name, Match: domain.MatchExact}
	}
	regions := []bool{false}
	if n.Region != "" {
		regions = append(regions, true)
	}
	try := func(d domain.TargetDescriptor) (domain.TargetDescriptor, bool) {
		return verify(s, i, d)
	}

	if name != nil {
		for _, reg := range regions {
			if d, ok := try(domain.TargetDescriptor{Role: n.Role, Name: name, Scope: scope(reg)}); ok {
				return d, nil
			}
		}
	}
	for _, a := range anchorsFor(s, i) {
		for _, reg := range regions {
			if d, ok := try(domain.TargetDescriptor{Role: n.Role, Name: name, Anchor: &a, Scope: scope(reg)}); ok {
				return d, nil
			}
		}
	}
	if name == nil {
		for _, reg := range regions {
			if d, ok := try(domain.TargetDescriptor{Role: n.Role, Scope: scope(reg)}); ok {
				return d, nil
			}
		}
	}
	for k := len(regions) - 1; k >= 0; k-- {
		d := domain.TargetDescriptor{Role: n.Role, Name: name, Scope: scope(regions[k])}
		_, cands, err := candidates(s, d)
		if err != nil {
			continue
		}
		for pos, c := range cands {
			if c == i {
				ord := pos + 1
				d.Ordinal = &ord
				if d, ok := try(d); ok {
					return d, nil
				}
				break
			}
		}
	}
	return domain.TargetDescriptor{}, domain.Errorf(domain.CodeTargetAmbiguous, "no unique descriptor for %s %q at %s", n.Role, n.Name, n.Path)
}

// verify resolves d on s and, when it lands on i, returns d with its
// RecordedStrategy set and, when it still lands on i with it, the node's CSS
// hint.
func verify(s *domain.UiSnapshot, i int, d domain.TargetDescriptor) (domain.TargetDescriptor, bool) {
	res, err := Resolve(s, d)
	if err != nil || res.Node != i {
		return d, false
	}
	d.RecordedStrategy = res.Strategy
	if css := s.Nodes[i].CSS; css != "" {
		h := d
		h.Hints = &domain.Hints{CSS: css}
		if res, err := Resolve(s, h); err == nil && res.Node == i {
			h.RecordedStrategy = res.Strategy
			return h, true
		}
	}
	return d, true
}

// anchorsFor lists anchors worth trying for unnamed node i, strongest
// first.
func anchorsFor(s *domain.UiSnapshot, i int) []domain.Anchor {
	var out []domain.Anchor
	add := func(rel domain.AnchorRelation, j int) {
		t := perception.CleanName(perception.Text(s, j))
		if perception.Fold(t) == "" {
			return
		}
		for _, a := range out {
			if a.Relation == rel && a.Text == t {
				return
			}
		}
		out = append(out, domain.Anchor{Relation: rel, Text: t})
	}
	parent := func(j int) int {
		p := s.Nodes[j].Parent
		if p < 0 || p >= len(s.Nodes) || p == j {
			return -1
		}
		return p
	}

	// labelled_by: the label or text right before it.
	if p := parent(i); p >= 0 {
		kids := s.Nodes[p].Children
		for k, c := range kids {
			if c == i && k > 0 {
				if prev := kids[k-1]; prev >= 0 && prev < len(s.Nodes) {
					if r := s.Nodes[prev].Role; r == "label" || r == "text" {
						add(domain.RelLabelledBy, prev)
					}
				}
				break
			}
		}
	}

	// row_of: the other cells of its innermost row.
	row, cell := -1, i
	for p, steps := parent(i), 0; p >= 0 && steps < len(s.Nodes); p, steps = parent(p), steps+1 {
		if s.Nodes[p].Role == "row" {
			row = p
			break
		}
		cell = p
	}
	if row >= 0 {
		tries := 0
		for _, c := range s.Nodes[row].Children {
			if c == cell || c < 0 || c >= len(s.Nodes) || s.Nodes[c].States.Hidden {
				continue
			}
			if tries++; tries > maxAnchorTries {
				break
			}
			add(domain.RelRowOf, c)
		}
	}

	// adjacent_to: the nearest label or text before it, within its
	// grandparent.
	lo := 0
	if p := parent(i); p >= 0 {
		lo = p
		if g := parent(p); g >= 0 {
			lo = g
		}
	}
	for j := i - 1; j > lo; j-- {
		if r := s.Nodes[j].Role; (r == "text" || r == "label") && !s.Nodes[j].States.Hidden {
			add(domain.RelAdjacentTo, j)
			break
		}
	}
	return out
}

// SynthesizeForRead describes node i for reading its value (an extract
// step): a descriptor that does not depend on the text it reads, so it finds
// the same field on another record. It tries the node's anchors (row_of,
// labelled_by, adjacent_to) without a name, then its role alone when no
// other node has that role, and falls back to [Synthesize] when neither
// describes the node uniquely; the bool reports whether the
// result is value independent.
func SynthesizeForRead(s *domain.UiSnapshot, i int) (domain.TargetDescriptor, bool, error) {
	if s == nil || i < 0 || i >= len(s.Nodes) {
		return domain.TargetDescriptor{}, false, domain.Errorf(domain.CodeTargetNotFound, "no node %d to describe", i)
	}
	n := &s.Nodes[i]
	var sc *domain.Scope
	if n.Frame != "" {
		sc = &domain.Scope{Frame: n.Frame}
	}
	for _, a := range anchorsFor(s, i) {
		d := domain.TargetDescriptor{Role: n.Role, Anchor: &a, Scope: sc}
		if res, err := Resolve(s, d); err == nil && res.Node == i {
			d.RecordedStrategy = res.Strategy
			return d, true, nil
		}
	}
	// The only node of its role (a status bar) is found by its role alone.
	if d := (domain.TargetDescriptor{Role: n.Role, Scope: sc}); n.Name != "" {
		if res, err := Resolve(s, d); err == nil && res.Node == i {
			d.RecordedStrategy = res.Strategy
			return d, true, nil
		}
	}
	d, err := Synthesize(s, i)
	return d, false, err
}
