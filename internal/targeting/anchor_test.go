package targeting

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func anchor(rel domain.AnchorRelation, text string) *domain.Anchor {
	return &domain.Anchor{Relation: rel, Text: text}
}

// forms is a fixture of label/control layouts.
func forms(tb testing.TB) *domain.UiSnapshot {
	tb.Helper()
	return build(tb, n("document", "Forms",
		n("form", "Transfer",
			// label then control, siblings after an unnamed wrapper is dropped
			n("generic", "", n("label", "", text("Account number")), n("textbox", "")),
			// control inside its label
			n("label", "", text("Nickname"), n("textbox", "")),
			// label split over two text nodes
			n("label", "", text("Routing"), n("strong", "", text("number"))),
			n("textbox", ""),
			// control before its label
			n("group", "", n("checkbox", ""), text("Remember me")),
			// label in a paragraph, control in the grandparent
			n("group", "", n("paragraph", "", text("Amount")), n("spinbutton", "")),
			// a table of label/control rows
			n("table", "",
				n("row", "", n("cell", "Memo", text("Memo")), n("cell", "", n("textbox", ""))),
				n("row", "", n("cell", "Reference", text("Reference")), n("cell", "", n("textbox", ""))),
			),
		),
		n("heading", "Other", text("Other")),
		n("button", "Go", text("Go")),
	))
}

// renamed is the fail-closed fixture: the control once named "Search" is
// now "Find member", next to a "Clear" button.
func renamed(tb testing.TB) *domain.UiSnapshot {
	tb.Helper()
	return build(tb, n("document", "Members",
		n("table", "",
			n("row", "",
				n("cell", "Member", text("Member")),
				n("cell", "", n("textbox", "Member").withCSS("#member")),
				n("cell", "", n("button", "Find member", text("Find member")).withCSS("#search")),
				n("cell", "", n("button", "Clear", text("Clear")).withCSS("#clear")),
			),
		),
		n("group", "",
			n("label", "", text("Member")),
			n("button", "Find member", text("Find member")).withCSS("#search2"),
			n("button", "Clear", text("Clear")),
		),
	))
}

// nested is a legacy page: a layout table whose row holds a cell with a
// nested layout table of label/value rows.
func nested(tb testing.TB) *domain.UiSnapshot {
	tb.Helper()
	return build(tb, n("document", "Balances",
		n("table", "",
			n("row", "",
				n("cell", "Savings Balance $1,234.56 Checking Balance $5.00",
					n("table", "",
						n("row", "",
							n("cell", "Savings Balance", text("Savings Balance")),
							n("cell", "$1,234.56", text("$1,234.56")),
						),
						n("row", "",
							n("cell", "Checking Balance", text("Checking Balance")),
							n("cell", "$5.00", text("$5.00")),
						),
					),
				),
				n("cell", "Outer value", text("Outer value")),
			),
		),
	))
}

func TestResolveAnchors(t *testing.T) {
	t.Parallel()
	f := forms(t)
	d := desk(t)
	nst := nested(t)
	tests := []struct {
		name string
		s    *domain.UiSnapshot
		d    domain.TargetDescriptor
		w    want
	}{
		// row_of
		{"row_of finds the row's button", d, domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelRowOf, "savings")},
			want{role: "button", name: "Edit", strategy: domain.StrategyStructuralAnchor, cands: 1}},
		{"row_of another row", d, domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelRowOf, "Checking")},
			want{role: "button", name: "Edit", k: 1, strategy: domain.StrategyStructuralAnchor}},
		{"row_of excludes the label cell, other cells are ambiguous", d, domain.TargetDescriptor{Role: "cell", Anchor: anchor(domain.RelRowOf, "Savings")},
			want{code: domain.CodeTargetAmbiguous, strategy: domain.StrategyStructuralAnchor, msg: []string{"2 candidates", "/0.2.3.1.1,", "/0.2.3.1.2"}}},
		{"row_of with ordinal", d, domain.TargetDescriptor{Role: "cell", Anchor: anchor(domain.RelRowOf, "Savings"), Ordinal: ptr(1)},
			want{role: "cell", name: "$1,234.56", strategy: domain.StrategyStructuralAnchor, cands: 2}},
		{"row_of the innermost row of a nested layout table", nst, domain.TargetDescriptor{Role: "cell", Anchor: anchor(domain.RelRowOf, "Savings Balance")},
			want{role: "cell", name: "$1,234.56", strategy: domain.StrategyStructuralAnchor, cands: 1}},
		{"row_of text that is no row", f, domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelRowOf, "Other")},
			want{code: domain.CodeTargetNotFound, msg: []string{"structural_anchor"}}},
		{"row_of a table row with a control", f, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelRowOf, "Reference")},
			want{role: "textbox", name: "", k: 4, strategy: domain.StrategyStructuralAnchor}},
		{"anchor narrows an ambiguous name", d, domain.TargetDescriptor{Role: "button", Name: exact("Edit"), Anchor: anchor(domain.RelRowOf, "Checking")},
			want{role: "button", name: "Edit", k: 1, strategy: domain.StrategySemanticExact, cands: 1}},
		{"an anchor no name match satisfies is not found, not ambiguous", d, domain.TargetDescriptor{Role: "button", Name: exact("Edit"), Anchor: anchor(domain.RelRowOf, "Loans")},
			want{code: domain.CodeTargetNotFound, msg: []string{"2 node(s) match the role and name, none row_of \"Loans\""}}},
		{"a unique name still needs its anchor", d, domain.TargetDescriptor{Role: "button", Name: exact("Clear"), Anchor: anchor(domain.RelRowOf, "Loans")},
			want{code: domain.CodeTargetNotFound, msg: []string{"1 node(s) match the role and name, none row_of \"Loans\""}}},

		// labelled_by
		{"labelled_by a preceding label", f, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelLabelledBy, "Account number")},
			want{role: "textbox", name: "", k: 0, strategy: domain.StrategyStructuralAnchor, cands: 1}},
		{"labelled_by the label it sits in", f, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelLabelledBy, "nickname:")},
			want{role: "textbox", name: "", k: 1, strategy: domain.StrategyStructuralAnchor}},
		{"labelled_by a label split over text nodes", f, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelLabelledBy, "Routing number")},
			want{role: "textbox", name: "", k: 2, strategy: domain.StrategyStructuralAnchor}},
		{"labelled_by a row label", f, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelLabelledBy, "Memo")},
			want{role: "textbox", name: "", k: 3, strategy: domain.StrategyStructuralAnchor}},
		{"labelled_by the accessible name", d, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelLabelledBy, "Member ID")},
			want{role: "textbox", name: "Member ID", strategy: domain.StrategyStructuralAnchor}},
		{"labelled_by needs the role", f, domain.TargetDescriptor{Role: "checkbox", Anchor: anchor(domain.RelLabelledBy, "Account number")},
			want{code: domain.CodeTargetNotFound}},

		// adjacent_to
		{"adjacent_to: next in the grandparent", d, domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelAdjacentTo, "Member ID")},
			want{role: "button", name: "Search", strategy: domain.StrategyStructuralAnchor, cands: 1}},
		{"adjacent_to: before when nothing follows", f, domain.TargetDescriptor{Role: "checkbox", Anchor: anchor(domain.RelAdjacentTo, "Remember me")},
			want{role: "checkbox", name: "", strategy: domain.StrategyStructuralAnchor}},
		{"adjacent_to: grandparent", f, domain.TargetDescriptor{Role: "spinbutton", Anchor: anchor(domain.RelAdjacentTo, "Amount")},
			want{role: "spinbutton", name: "", strategy: domain.StrategyStructuralAnchor}},
		{"adjacent_to: the nearest only", f, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelAdjacentTo, "Routing number")},
			want{role: "textbox", name: "", k: 2, strategy: domain.StrategyStructuralAnchor, cands: 1}},
		{"adjacent_to: not beyond the grandparent", f, domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelAdjacentTo, "Amount")},
			want{code: domain.CodeTargetNotFound}},

		// within_section
		{"within_section", d, domain.TargetDescriptor{Role: "searchbox", Anchor: anchor(domain.RelWithinSection, "member lookup")},
			want{role: "searchbox", name: "Quick find", strategy: domain.StrategyStructuralAnchor}},
		{"within_section: textbox covers searchbox", d, domain.TargetDescriptor{Role: "textbox", Anchor: anchor(domain.RelWithinSection, "member lookup")},
			want{code: domain.CodeTargetAmbiguous, msg: []string{"2 candidates"}}},
		{"within_section ambiguous", d, domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelWithinSection, "Accounts")},
			want{code: domain.CodeTargetAmbiguous, strategy: domain.StrategyStructuralAnchor, msg: []string{"3 candidates"}}},
		{"within_section with ordinal", d, domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelWithinSection, "Accounts"), Ordinal: ptr(2)},
			want{role: "button", name: "Edit", k: 1, strategy: domain.StrategyStructuralAnchor, cands: 3}},
		{"drift to the anchor", d, domain.TargetDescriptor{Role: "searchbox", Anchor: anchor(domain.RelWithinSection, "Member lookup"), RecordedStrategy: domain.StrategySemanticExact},
			want{role: "searchbox", name: "Quick find", strategy: domain.StrategyStructuralAnchor, drifted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkResolve(t, tt.s, tt.d, tt.w)
		})
	}
}

// lookup is a member page: one "Look up" button next to the member's label
// (the page shows member 1002), with a cached CSS hint.
func lookup(tb testing.TB) *domain.UiSnapshot {
	tb.Helper()
	return build(tb, n("document", "Member",
		n("main", "",
			n("heading", "Member record", text("Member record")),
			n("generic", "",
				n("text", "Member 1002"),
				n("button", "Look up", text("Look up")).withCSS("#lookup"),
			),
		),
	))
}

// twoLookups shows two members, each with its own "Look up" button.
func twoLookups(tb testing.TB) *domain.UiSnapshot {
	tb.Helper()
	return build(tb, n("document", "Members",
		n("main", "",
			n("generic", "",
				n("text", "Member 1001"),
				n("button", "Look up", text("Look up")).withCSS("#lookup-1001"),
			),
			n("generic", "",
				n("text", "Member 1002"),
				n("button", "Look up", text("Look up")).withCSS("#lookup-1002"),
			),
		),
	))
}

// TestAnchorAlwaysApplies: a candidate satisfies name AND anchor on every
// rung (invariant 23); a lone name match beside another label, or a cached
// hint's node beside it, is TARGET_NOT_FOUND naming the anchor.
func TestAnchorAlwaysApplies(t *testing.T) {
	t.Parallel()
	one, two := lookup(t), twoLookups(t)
	named := func(member string) domain.TargetDescriptor {
		return domain.TargetDescriptor{Role: "button", Name: exact("Look up"), Anchor: anchor(domain.RelAdjacentTo, member)}
	}
	withCSS := func(d domain.TargetDescriptor, css string) domain.TargetDescriptor {
		d.Hints = &domain.Hints{CSS: css}
		return d
	}
	unnamed := func(rel domain.AnchorRelation, member string) domain.TargetDescriptor {
		return domain.TargetDescriptor{Role: "button", Anchor: anchor(rel, member)}
	}
	notFound := func(rel domain.AnchorRelation, member string, more ...string) want {
		return want{code: domain.CodeTargetNotFound, msg: append([]string{string(rel) + ` "` + member + `"`}, more...)}
	}
	tests := []struct {
		name string
		s    *domain.UiSnapshot
		d    domain.TargetDescriptor
		w    want
	}{
		{"single name match, anchor does not hold", one, named("Member 1001"),
			notFound(domain.RelAdjacentTo, "Member 1001", "1 node(s) match the role and name, none adjacent_to")},
		{"single name match, anchor holds", one, named("Member 1002"),
			want{role: "button", name: "Look up", strategy: domain.StrategySemanticExact, cands: 1}},
		{"single normalized name match, anchor does not hold", one,
			domain.TargetDescriptor{Role: "button", Name: exact("LOOK UP"), Anchor: anchor(domain.RelAdjacentTo, "Member 1001")},
			notFound(domain.RelAdjacentTo, "Member 1001", "semantic_normalized")},
		{"single match, other relations", one, domain.TargetDescriptor{Role: "button", Name: exact("Look up"), Anchor: anchor(domain.RelWithinSection, "Member 1001")},
			notFound(domain.RelWithinSection, "Member 1001")},
		{"two name matches, the anchored one", two, named("Member 1002"),
			want{role: "button", name: "Look up", k: 1, strategy: domain.StrategySemanticExact, cands: 1}},
		{"two name matches, the other anchored one", two, named("Member 1001"),
			want{role: "button", name: "Look up", k: 0, strategy: domain.StrategySemanticExact, cands: 1}},
		{"two name matches, none anchored", two, named("Member 1003"),
			notFound(domain.RelAdjacentTo, "Member 1003", "2 node(s)")},
		{"hint rung whose node fails the anchor is refused (named)", one, withCSS(named("Member 1001"), "#lookup"),
			notFound(domain.RelAdjacentTo, "Member 1001", "hint_cached")},
		{"hint rung whose node fails the anchor is refused (unnamed)", one, withCSS(unnamed(domain.RelAdjacentTo, "Member 1001"), "#lookup"),
			notFound(domain.RelAdjacentTo, "Member 1001", "hint_cached")},
		{"hint rung, other member's hint", two, withCSS(unnamed(domain.RelRowOf, "Member 1001"), "#lookup-1002"),
			notFound(domain.RelRowOf, "Member 1001", "hint_cached")},
		{"hint of a renamed control fails the anchor", two,
			withCSS(domain.TargetDescriptor{Role: "button", Name: exact("Find"), Anchor: anchor(domain.RelAdjacentTo, "Member 1001")}, "#lookup-1002"),
			notFound(domain.RelAdjacentTo, "Member 1001")},
		{"anchor satisfied, out of scope", one,
			domain.TargetDescriptor{Role: "button", Name: exact("Look up"), Anchor: anchor(domain.RelAdjacentTo, "Member 1002"), Scope: &domain.Scope{Region: "Other"}},
			want{code: domain.CodeTargetNotFound}},
		{"anchor satisfied, in scope", one,
			domain.TargetDescriptor{Role: "button", Name: exact("Look up"), Anchor: anchor(domain.RelAdjacentTo, "Member 1002"), Scope: &domain.Scope{Region: "Member record"}},
			want{role: "button", name: "Look up", strategy: domain.StrategySemanticExact}},
		{"ordinal counts among the anchored", two,
			domain.TargetDescriptor{Role: "button", Name: exact("Look up"), Anchor: anchor(domain.RelAdjacentTo, "Member 1002"), Ordinal: ptr(2)},
			want{code: domain.CodeTargetNotFound, msg: []string{"ordinal 2 out of range, 1 candidate(s)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkResolve(t, tt.s, tt.d, tt.w)
		})
	}
}

// A renamed control is never found through its anchor: not the neighbour,
// not the control under its new name, not through its cached CSS hint.
func TestResolveRenamedFailsClosed(t *testing.T) {
	t.Parallel()
	s := renamed(t)
	for _, rel := range []domain.AnchorRelation{domain.RelRowOf, domain.RelLabelledBy, domain.RelAdjacentTo, domain.RelWithinSection} {
		for _, css := range []string{"", "#search", "#clear"} {
			d := domain.TargetDescriptor{
				Role:             "button",
				Name:             exact("Search"),
				Anchor:           anchor(rel, "Member"),
				RecordedStrategy: domain.StrategySemanticExact,
			}
			if css != "" {
				d.Hints = &domain.Hints{CSS: css}
			}
			t.Run(Describe(d), func(t *testing.T) {
				t.Parallel()
				res, err := Resolve(s, d)
				if domain.ErrorCode(err) != domain.CodeTargetNotFound || res.Node != -1 {
					t.Fatalf("Resolve = %+v, %v; want TARGET_NOT_FOUND", res, err)
				}
			})
		}
	}
	// The anchor does reach the controls: without a name it finds them.
	unnamed := domain.TargetDescriptor{Role: "button", Anchor: anchor(domain.RelAdjacentTo, "Member")}
	if _, err := Resolve(s, unnamed); domain.ErrorCode(err) != domain.CodeTargetAmbiguous {
		t.Errorf("unnamed adjacent_to: %v", err)
	}
}

func TestExtractText(t *testing.T) {
	t.Parallel()
	d := desk(t)
	nst := nested(t)
	tests := []struct {
		name string
		s    *domain.UiSnapshot
		d    domain.TargetDescriptor
		want string
	}{
		{"value cell", nst, domain.TargetDescriptor{Role: "cell", Anchor: anchor(domain.RelRowOf, "Savings Balance")}, "$1,234.56"},
		{"input value", d, domain.TargetDescriptor{Role: "textbox", Name: exact("Member ID")}, "12345"},
		{"empty input", d, domain.TargetDescriptor{Role: "searchbox"}, ""},
		{"unnamed cell text", d, domain.TargetDescriptor{Role: "cell", Anchor: anchor(domain.RelRowOf, "Savings"), Ordinal: ptr(2)}, "Edit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Resolve(tt.s, tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if got := ExtractText(tt.s, res); got != tt.want {
				t.Errorf("ExtractText = %q, want %q", got, tt.want)
			}
		})
	}
	if got := ExtractText(d, Resolution{Node: -1}); got != "" {
		t.Errorf("ExtractText(no node) = %q", got)
	}
}

// TestAnchorAppliesInPredicates: node_exists and node_has_value resolve as
// Resolve does, so an identity check {cell "12345", row_of "Member
// number"} does not hold on a page whose only "12345" is in another row.
func TestAnchorAppliesInPredicates(t *testing.T) {
	t.Parallel()
	s := build(t, n("document", "Member",
		n("table", "",
			n("row", "", n("cell", "Member number", text("Member number")), n("cell", "56789", text("56789"))),
			n("row", "", n("cell", "Referred by", text("Referred by")), n("cell", "12345", text("12345"))),
		),
	))
	check := func(number, row string) domain.TargetDescriptor {
		return domain.TargetDescriptor{Role: "cell", Name: exact(number), Anchor: anchor(domain.RelRowOf, row)}
	}
	for _, tt := range []struct {
		d    domain.TargetDescriptor
		want bool
	}{
		{check("12345", "Member number"), false},
		{check("56789", "Member number"), true},
		{check("12345", "Referred by"), true},
	} {
		got, err := Eval(s, &domain.Predicate{NodeExists: &tt.d})
		if err != nil || got != tt.want {
			t.Errorf("node_exists %s = %v, %v; want %v", Describe(tt.d), got, err, tt.want)
		}
		got, err = Eval(s, &domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: tt.d, Value: tt.d.Name.Value}})
		if err != nil || got != tt.want {
			t.Errorf("node_has_value %s = %v, %v; want %v", Describe(tt.d), got, err, tt.want)
		}
	}
}
