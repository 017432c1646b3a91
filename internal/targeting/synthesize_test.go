package targeting

import (
	"reflect"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

func TestSynthesize(t *testing.T) {
	t.Parallel()
	d := desk(t)
	f := forms(t)
	nst := nested(t)
	tests := []struct {
		name       string
		s          *domain.UiSnapshot
		role, node string
		k          int
		want       domain.TargetDescriptor
	}{
		{"unique name", d, "button", "Clear", 0,
			domain.TargetDescriptor{Role: "button", Name: exact("Clear"), RecordedStrategy: domain.StrategySemanticExact}},
		{"name + region, with its hint", d, "button", "Search", 0,
			domain.TargetDescriptor{Role: "button", Name: exact("Search"), Scope: &domain.Scope{Region: "Member lookup"},
				Hints: &domain.Hints{CSS: "#search-btn"}, RecordedStrategy: domain.StrategySemanticExact}},
		{"name + frame", d, "button", "Search", 1,
			domain.TargetDescriptor{Role: "button", Name: exact("Search"), Scope: &domain.Scope{Frame: "content"}, RecordedStrategy: domain.StrategySemanticExact}},
		{"name + row anchor", d, "button", "Edit", 1,
			domain.TargetDescriptor{Role: "button", Name: exact("Edit"), Anchor: anchor(domain.RelRowOf, "Checking"), RecordedStrategy: domain.StrategySemanticExact}},
		{"unnamed, labelled_by", f, "textbox", "", 0,
			domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelLabelledBy, "Account number"), RecordedStrategy: domain.StrategyStructuralAnchor}},
		{"unnamed, row_of", f, "textbox", "", 4,
			domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelRowOf, "Reference"), RecordedStrategy: domain.StrategyStructuralAnchor}},
		{"unnamed, adjacent_to", f, "spinbutton", "", 0,
			domain.TargetDescriptor{Role: "spinbutton", Anchor: anchor(domain.RelAdjacentTo, "Amount"), RecordedStrategy: domain.StrategyStructuralAnchor}},
		{"unnamed, role alone", f, "checkbox", "", 0,
			domain.TargetDescriptor{Role: "checkbox", RecordedStrategy: domain.StrategyOrdinalInRegion}},
		{"value cell by its name", nst, "cell", "$1,234.56", 0,
			domain.TargetDescriptor{Role: "cell", Name: exact("$1,234.56"), RecordedStrategy: domain.StrategySemanticExact}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			i := find(t, tt.s, tt.role, tt.node, tt.k)
			got, err := Synthesize(tt.s, i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Synthesize = %s (%s)\nwant         %s (%s)", Describe(got), got.RecordedStrategy, Describe(tt.want), tt.want.RecordedStrategy)
			}
		})
	}
}

func TestSynthesizeOrdinal(t *testing.T) {
	t.Parallel()
	// Three identical rows: nothing but an ordinal tells them apart.
	row := func() tn {
		return n("row", "", n("cell", "Item", text("Item")), n("cell", "", n("button", "Remove", text("Remove"))))
	}
	s := build(t, n("document", "List", n("heading", "Cart", text("Cart")), n("table", "", row(), row(), row())))
	i := find(t, s, "button", "Remove", 2)
	got, err := Synthesize(s, i)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.TargetDescriptor{Role: "button", Name: exact("Remove"), Scope: &domain.Scope{Region: "Cart"}, Ordinal: ptr(3), RecordedStrategy: domain.StrategySemanticExact}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Synthesize = %s, want %s", Describe(got), Describe(want))
	}
}

func TestSynthesizeRoundTrip(t *testing.T) {
	t.Parallel()
	snaps := map[string]*domain.UiSnapshot{
		"desk":      desk(t),
		"forms":     forms(t),
		"renamed":   renamed(t),
		"nested":    nested(t),
		"synthetic": perception.Normalize(perception.Synthetic(1500, 5)),
	}
	for name, s := range snaps {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			strategies := map[domain.Strategy]int{}
			for i := range s.Nodes {
				d, err := Synthesize(s, i)
				if err != nil {
					t.Errorf("Synthesize(%s %q at %s): %v", s.Nodes[i].Role, s.Nodes[i].Name, s.Nodes[i].Path, err)
					continue
				}
				res, err := Resolve(s, d)
				if err != nil || res.Node != i || res.Strategy != d.RecordedStrategy || res.Drifted {
					t.Errorf("Resolve(Synthesize(%s)) = %+v, %v", s.Nodes[i].Path, res, err)
				}
				if d.Hints != nil && d.Hints.CSS != s.Nodes[i].CSS {
					t.Errorf("hint %q for a node with CSS %q", d.Hints.CSS, s.Nodes[i].CSS)
				}
				strategies[d.RecordedStrategy]++
			}
			t.Logf("%d nodes: %v", len(s.Nodes), strategies)
		})
	}
}

func TestSynthesizeErrors(t *testing.T) {
	t.Parallel()
	s := desk(t)
	if _, err := Synthesize(s, len(s.Nodes)); domain.ErrorCode(err) != domain.CodeTargetNotFound {
		t.Errorf("out of range: %v", err)
	}
	if _, err := Synthesize(nil, 0); domain.ErrorCode(err) != domain.CodeTargetNotFound {
		t.Errorf("nil snapshot: %v", err)
	}
	i := find(t, s, "button", "Clear", 0)
	s.Nodes[i].States.Hidden = true
	if _, err := Synthesize(s, i); domain.ErrorCode(err) != domain.CodeTargetNotFound {
		t.Errorf("hidden: %v", err)
	}
}

func TestSynthesizeForReadIsValueIndependent(t *testing.T) {
	t.Parallel()
	s := perception.Normalize(&domain.UiSnapshot{
		Frames: []domain.Frame{{Path: "", Root: 0}},
		Nodes: []domain.Node{
			{Index: 0, Role: "document", Parent: -1, Children: []int{1}},
			{Index: 1, Role: "table", Parent: 0, Children: []int{2, 5}},
			{Index: 2, Role: "row", Parent: 1, Children: []int{3, 4}},
			{Index: 3, Role: "cell", Name: "Savings Balance", Parent: 2},
			{Index: 4, Role: "cell", Name: "$1,234.56", Parent: 2},
			{Index: 5, Role: "row", Parent: 1, Children: []int{6, 7}},
			{Index: 6, Role: "cell", Name: "Status", Parent: 5},
			{Index: 7, Role: "cell", Name: "Active", Parent: 5},
		},
	})
	var value int = -1
	for i, n := range s.Nodes {
		if n.Name == "$1,234.56" {
			value = i
		}
	}
	d, independent, err := SynthesizeForRead(s, value)
	if err != nil || !independent {
		t.Fatalf("SynthesizeForRead: %+v %v %v", d, independent, err)
	}
	if d.Name != nil || d.Anchor == nil || d.Anchor.Relation != domain.RelRowOf || d.Anchor.Text != "Savings Balance" {
		t.Errorf("descriptor %+v, want a row_of anchor on Savings Balance without a name", d)
	}
}

func TestRowOfSkipsBlankSpacerCells(t *testing.T) {
	t.Parallel()
	s := perception.Normalize(&domain.UiSnapshot{
		Frames: []domain.Frame{{Path: "", Root: 0}},
		Nodes: []domain.Node{
			{Index: 0, Role: "document", Parent: -1, Children: []int{1}},
			{Index: 1, Role: "table", Parent: 0, Children: []int{2}},
			{Index: 2, Role: "row", Parent: 1, Children: []int{3, 4, 5}},
			{Index: 3, Role: "cell", Name: "Status", Parent: 2},
			{Index: 4, Role: "cell", Parent: 2},
			{Index: 5, Role: "cell", Name: "Active", Parent: 2},
		},
	})
	d := domain.TargetDescriptor{Role: "cell", Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: "Status"}}
	res, err := Resolve(s, d)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if got := s.Nodes[res.Node].Name; got != "Active" {
		t.Errorf("resolved %q, want the value cell Active", got)
	}
}

// TestSynthesizeForReadUniqueRole: a value with no anchor that is the only
// node of its role (a status bar) is read by its role alone, not by the
// text it shows; a second node of the role falls back to the name.
func TestSynthesizeForReadUniqueRole(t *testing.T) {
	t.Parallel()
	snap := func(extra ...domain.Node) *domain.UiSnapshot {
		nodes := []domain.Node{
			{Index: 0, Role: "document", Parent: -1, Children: []int{1, 2}},
			{Index: 1, Role: "button", Name: "Greet", Parent: 0},
			{Index: 2, Role: "status", Name: "Hello, Ada (Red)", Parent: 0},
		}
		for _, e := range extra {
			e.Index, e.Parent = len(nodes), 0
			nodes[0].Children = append(nodes[0].Children, e.Index)
			nodes = append(nodes, e)
		}
		return perception.Normalize(&domain.UiSnapshot{Frames: []domain.Frame{{Path: "", Root: 0}}, Nodes: nodes})
	}
	index := func(s *domain.UiSnapshot) int {
		for i, n := range s.Nodes {
			if n.Name == "Hello, Ada (Red)" {
				return i
			}
		}
		t.Fatal("no status node")
		return -1
	}
	s := snap()
	d, independent, err := SynthesizeForRead(s, index(s))
	if err != nil || !independent || d.Role != "status" || d.Name != nil || d.Anchor != nil {
		t.Fatalf("unique status: %+v %v %v, want role status alone", d, independent, err)
	}
	s = snap(domain.Node{Role: "status", Name: "Ready"})
	d, independent, err = SynthesizeForRead(s, index(s))
	if err != nil || independent || d.Name == nil {
		t.Errorf("two status nodes: %+v %v %v, want the named fallback", d, independent, err)
	}
}
