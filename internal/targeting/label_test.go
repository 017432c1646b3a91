package targeting

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// TestLabelAndValueLayouts reads "Name: Jane Roe" written in one text node
// and split over two inline elements, with the same descriptors.
func TestLabelAndValueLayouts(t *testing.T) {
	t.Parallel()
	layouts := map[string]*domain.UiSnapshot{
		"one text node": build(t, n("document", "Member",
			n("heading", "Member", text("Member")),
			n("paragraph", "", text("Name: Jane Roe")),
			n("paragraph", "", text("Status: Active")),
		)),
		"two inline elements": build(t, n("document", "Member",
			n("heading", "Member", text("Member")),
			n("paragraph", "", text("Name:"), text("Jane Roe")),
			n("paragraph", "", text("Status:"), text("Active")),
		)),
		"two elements in a definition list": build(t, n("document", "Member",
			n("list", "",
				n("term", "", text("Name:")),
				n("definition", "", text("Jane Roe")),
				n("term", "", text("Status:")),
				n("definition", "", text("Active")),
			),
		)),
	}
	for lname, s := range layouts {
		for _, d := range []domain.TargetDescriptor{
			{Role: "text", Anchor: anchor(domain.RelAdjacentTo, "Name:")},
			{Role: "text", Anchor: anchor(domain.RelLabelledBy, "Name:")},
			{Role: "text", Anchor: anchor(domain.RelAdjacentTo, "name")},
		} {
			if d.Anchor.Relation == domain.RelLabelledBy && lname == "two elements in a definition list" {
				d.Role = "definition" // a term labels the definition after it
			}
			t.Run(lname+"/"+Describe(d), func(t *testing.T) {
				t.Parallel()
				res, err := Resolve(s, d)
				if err != nil {
					t.Fatal(err)
				}
				if got := ExtractText(s, res); got != "Jane Roe" {
					t.Fatalf("ExtractText = %q (node %s %q, label %q), want Jane Roe", got, s.Nodes[res.Node].Role, s.Nodes[res.Node].Name, res.Label)
				}
			})
		}
	}
	// A paragraph holding just the inline label is found by its own role.
	s := layouts["one text node"]
	res, err := Resolve(s, domain.TargetDescriptor{Role: "paragraph", Anchor: anchor(domain.RelAdjacentTo, "Status")})
	if err != nil {
		t.Fatal(err)
	}
	if got := ExtractText(s, res); got != "Active" || s.Nodes[res.Node].Role != "paragraph" {
		t.Fatalf("paragraph: %q from %s", got, s.Nodes[res.Node].Role)
	}
	// An anchor that only starts a word is no label.
	if _, err := Resolve(s, domain.TargetDescriptor{Role: "text", Anchor: anchor(domain.RelAdjacentTo, "Nam")}); domain.ErrorCode(err) != domain.CodeTargetNotFound {
		t.Fatalf("anchor Nam: %v, want TARGET_NOT_FOUND", err)
	}
}

// TestAnchorProseDoesNotAmbiguate: the anchor text also appears in a
// heading and inside the page's instructions; the label that is a label
// wins. Two real labels stay ambiguous.
func TestAnchorProseDoesNotAmbiguate(t *testing.T) {
	t.Parallel()
	s := build(t, n("document", "Lookup",
		n("main", "",
			n("heading", "Member ID", text("Member ID")),
			n("textbox", "Quick search"),
			n("paragraph", "", text("Enter the"), n("strong", "", text("Member ID")), text("below, then press Search.")),
			n("textbox", "Notes"),
			n("group", "", n("label", "", text("Member ID")), n("textbox", "")),
			n("button", "Search", text("Search")),
		),
	))
	for _, rel := range []domain.AnchorRelation{domain.RelAdjacentTo, domain.RelLabelledBy} {
		checkResolve(t, s, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(rel, "Member ID")},
			want{role: "textbox", name: "", strategy: domain.StrategyStructuralAnchor, cands: 1})
	}
	// Without the real label, the prose still anchors (and honestly).
	noLabel := build(t, n("document", "Lookup",
		n("main", "",
			n("heading", "Member ID", text("Member ID")),
			n("textbox", "Quick search"),
		),
	))
	checkResolve(t, noLabel, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelAdjacentTo, "Member ID")},
		want{role: "textbox", name: "Quick search", strategy: domain.StrategyStructuralAnchor})
	two := build(t, n("document", "Lookup",
		n("group", "", n("label", "", text("Member ID")), n("textbox", "")),
		n("group", "", n("label", "", text("Member ID")), n("textbox", "")),
	))
	checkResolve(t, two, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelAdjacentTo, "Member ID")},
		want{code: domain.CodeTargetAmbiguous, msg: []string{"2 candidates"}})
}

// TestScopeFrameByTitle names a frame by its iframe's title (Frame.Title)
// and by the framed document's title, besides its name.
func TestScopeFrameByTitle(t *testing.T) {
	t.Parallel()
	raw := &domain.UiSnapshot{URL: "https://bank.example/", Nodes: []domain.Node{
		{Index: 0, Role: "document", Name: "Desk", Parent: -1, Children: []int{1, 2, 3}},
		{Index: 1, Role: "iframe", Name: "Statement viewer", Parent: 0},
		{Index: 2, Role: "iframe", Name: "Help", Parent: 0},
		{Index: 3, Role: "button", Name: "Print", Parent: 0},
		{Index: 4, Role: "document", Name: "Statement 2026-11", Parent: -1, Children: []int{5}, Frame: "frame1"},
		{Index: 5, Role: "button", Name: "Print", Parent: 4, Frame: "frame1"},
		{Index: 6, Role: "document", Name: "Help center", Parent: -1, Children: []int{7}, Frame: "frame2"},
		{Index: 7, Role: "button", Name: "Print", Parent: 6, Frame: "frame2"},
	}, Frames: []domain.Frame{
		{ID: "top", Path: "", Root: 0},
		{ID: "f1", Name: "frame1", Path: "frame1", Title: "Statement viewer", Root: 4},
		{ID: "f2", Name: "frame2", Path: "frame2", Root: 6},
	}}
	s := perception.Normalize(raw)
	print := func(frame string) domain.TargetDescriptor {
		return domain.TargetDescriptor{Role: "button", Name: exact("Print"), Scope: &domain.Scope{Frame: frame}}
	}
	for frame, wantFrame := range map[string]string{
		"frame1": "frame1", "Statement viewer": "frame1", "statement VIEWER": "frame1",
		"frame2": "frame2", "Help center": "frame2",
	} {
		res, err := Resolve(s, print(frame))
		if err != nil {
			t.Errorf("scope.frame %q: %v", frame, err)
			continue
		}
		if got := s.Nodes[res.Node].Frame; got != wantFrame {
			t.Errorf("scope.frame %q resolved in frame %q, want %q", frame, got, wantFrame)
		}
	}
	if _, err := Resolve(s, print("Nowhere")); domain.ErrorCode(err) != domain.CodeTargetNotFound {
		t.Errorf("unknown frame title: %v", err)
	}
	ok, err := Eval(s, &domain.Predicate{TextPresent: &domain.TextQuery{Text: "Print", Frame: "Statement viewer", Match: domain.MatchContains}})
	if err != nil || !ok {
		t.Errorf("text_present in a frame named by title = %v, %v", ok, err)
	}
	// A raw snapshot whose frame root still hangs under its iframe node.
	raw.Nodes[1].Children = []int{4}
	raw.Nodes[4].Parent = 1
	raw.Frames[1].Title = ""
	if got := frameAliases(nil, raw, "Statement viewer"); len(got) != 1 || got[0] != "frame1" {
		t.Errorf("iframe node name alias = %v", got)
	}
}

// TestUnboundTemplatesFailClosed: a descriptor or predicate that still
// holds an input template was never bound; it is refused, never matched
// literally.
func TestUnboundTemplatesFailClosed(t *testing.T) {
	t.Parallel()
	s := desk(t)
	for _, d := range []domain.TargetDescriptor{
		{Role: "button", Name: &domain.NameMatch{Input: "label", Match: domain.MatchExact}},
		{Role: "button", Name: exact("Member {input.member_id}")},
		{Role: "cell", Anchor: anchor(domain.RelRowOf, "{input.account}")},
	} {
		if _, err := Resolve(s, d); domain.ErrorCode(err) != domain.CodeCapabilityInvalid || !strings.Contains(err.Error(), "BindTemplates") {
			t.Errorf("Resolve(%s) = %v, want CAPABILITY_INVALID naming BindTemplates", Describe(d), err)
		}
	}
	for _, p := range []domain.Predicate{
		{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "textbox", Name: exact("Member ID")}, Input: "member_id"}},
		{TextPresent: &domain.TextQuery{Text: "Member {input.member_id}", Match: domain.MatchContains}},
	} {
		if _, err := Eval(s, &p); domain.ErrorCode(err) != domain.CodeCapabilityInvalid {
			t.Errorf("Eval(%+v) = %v, want CAPABILITY_INVALID", p, err)
		}
	}
}
