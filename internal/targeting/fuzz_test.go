package targeting

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

var (
	fuzzRoles = []string{"RootWebArea", "Iframe", "generic", "none", "StaticText", "InlineTextBox", "LineBreak",
		"LayoutTable", "LayoutTableRow", "LayoutTableCell", "row", "cell", "button", "textbox", "searchbox",
		"LabelText", "heading", "main", "form", "dialog", "alertdialog", "combobox", "option", "link", "", "Weird"}
	fuzzWords  = []string{"", "Search", "search", "Clear", "Member ID", "Savings Balance", "$1,234.56", " ", "\u00a0Edit\u200b", "Édit", "…"}
	fuzzFrames = []string{"", "", "", "content", "content/inner", "nav"}
)

// randomRaw builds an arbitrary, often malformed, raw snapshot: parents
// and children out of range, self-references, cycles, frames pointing
// anywhere.
func randomRaw(seed int64, size int) *domain.UiSnapshot {
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	s := &domain.UiSnapshot{URL: "https://x.example/" + strconv.Itoa(size)}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	for i := 0; i < size; i++ {
		nd := domain.Node{
			Index:  i,
			Role:   pick(fuzzRoles),
			Name:   pick(fuzzWords),
			Value:  pick(fuzzWords),
			Frame:  pick(fuzzFrames),
			Parent: rng.IntN(size+2) - 2,
			CSS:    pick([]string{"", "#a", "#b"}),
			States: domain.NodeStates{Hidden: rng.IntN(8) == 0, Focusable: rng.IntN(3) == 0},
		}
		if nd.Parent >= 0 && rng.IntN(4) > 0 {
			nd.Parent = rng.IntN(i + 1) // mostly a tree
		}
		for k := rng.IntN(4); k > 0; k-- {
			nd.Children = append(nd.Children, rng.IntN(size+2)-1)
		}
		s.Nodes = append(s.Nodes, nd)
	}
	// Make most parents list their children.
	for i := range s.Nodes {
		if p := s.Nodes[i].Parent; p >= 0 && p < size && rng.IntN(5) > 0 {
			s.Nodes[p].Children = append(s.Nodes[p].Children, i)
		}
	}
	for k := rng.IntN(3); k >= 0; k-- {
		s.Frames = append(s.Frames, domain.Frame{Path: pick(fuzzFrames), Root: rng.IntN(size+2) - 1, URL: s.URL})
	}
	return s
}

func FuzzResolve(f *testing.F) {
	f.Add(int64(1), uint8(30), "button", "Search", uint8(0), uint8(0), "Member ID", int8(0), "#a", "", "")
	f.Add(int64(2), uint8(60), "cell", "", uint8(1), uint8(1), "Savings Balance", int8(1), "", "Search", "content")
	f.Add(int64(3), uint8(5), "textbox", "ed", uint8(2), uint8(2), "…", int8(-1), "#b", "", "inner")
	f.Add(int64(4), uint8(90), "", "^S", uint8(3), uint8(3), "Clear", int8(2), "", "x", "")
	f.Add(int64(5), uint8(0), "searchbox", "(", uint8(3), uint8(4), "", int8(0), "", "", "")
	f.Fuzz(func(t *testing.T, seed int64, size uint8, role, name string, mode, rel uint8, anchorText string, ord int8, css, region, frame string) {
		raw := randomRaw(seed, int(size))
		norm := perception.Normalize(raw)
		for i, nd := range norm.Nodes {
			if nd.Index != i || nd.Parent >= i {
				t.Fatalf("normalised node %d: index %d parent %d", i, nd.Index, nd.Parent)
			}
		}
		d := domain.TargetDescriptor{Role: role}
		if name != "" {
			modes := []domain.MatchMode{domain.MatchExact, domain.MatchNormalized, domain.MatchContains, domain.MatchRegex, "bogus", ""}
			d.Name = &domain.NameMatch{Value: name, Match: modes[int(mode)%len(modes)]}
		}
		rels := []domain.AnchorRelation{domain.RelRowOf, domain.RelLabelledBy, domain.RelAdjacentTo, domain.RelWithinSection}
		if int(rel)%5 < len(rels) && anchorText != "" {
			d.Anchor = &domain.Anchor{Relation: rels[int(rel)%5], Text: anchorText}
		}
		if ord != 0 {
			o := int(ord)
			d.Ordinal = &o
		}
		if css != "" {
			d.Hints = &domain.Hints{CSS: css}
		}
		if region != "" || frame != "" {
			d.Scope = &domain.Scope{Frame: frame, Region: region}
		}
		var tm domain.MatchMode
		if d.Name != nil {
			tm = d.Name.Match
		}
		for _, s := range []*domain.UiSnapshot{raw, norm} {
			res, err := Resolve(s, d)
			if err == nil && (res.Node < 0 || res.Node >= len(s.Nodes)) {
				t.Fatalf("Resolve returned node %d of %d", res.Node, len(s.Nodes))
			}
			if err != nil && res.Node != -1 {
				t.Fatalf("failed Resolve names node %d", res.Node)
			}
			_ = ExtractText(s, res)
			p := domain.Predicate{AnyOf: []domain.Predicate{
				{NodeExists: &d},
				{TextPresent: &domain.TextQuery{Text: anchorText + "x", Match: tm}},
				{NodeHasValue: &domain.ValueCheck{Target: d, Value: name}},
			}}
			_, _ = Eval(s, &p)
		}
		for i := 0; i < len(norm.Nodes) && i < 8; i++ {
			sd, err := Synthesize(norm, i)
			if err != nil {
				continue
			}
			if res, err := Resolve(norm, sd); err != nil || res.Node != i {
				t.Fatalf("Resolve(Synthesize(%d) = %s) = %+v, %v", i, Describe(sd), res, err)
			}
		}
	})
}
