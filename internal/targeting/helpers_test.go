package targeting

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// tn is a node of a hand-built raw tree.
type tn struct {
	role, name, value, css, frame string
	st                            domain.NodeStates
	kids                          []tn
}

func n(role, name string, kids ...tn) tn { return tn{role: role, name: name, kids: kids} }

func (t tn) val(v string) tn              { t.value = v; return t }
func (t tn) withCSS(c string) tn          { t.css = c; return t }
func (t tn) in(frame string) tn           { t.frame = frame; return t }
func (t tn) state(s domain.NodeStates) tn { t.st = s; return t }

// text is a StaticText node as Chromium reports it, with its inline box.
func text(s string) tn { return n("text", s) }

// build flattens roots into a raw snapshot (each root with its frame
// listed in Frames) and normalises it.
func build(tb testing.TB, roots ...tn) *domain.UiSnapshot {
	tb.Helper()
	raw := &domain.UiSnapshot{URL: "https://bank.example/desk", HTTPStatus: 200}
	var add func(t tn, parent int, frame string) int
	add = func(t tn, parent int, frame string) int {
		i := len(raw.Nodes)
		raw.Nodes = append(raw.Nodes, domain.Node{
			Index: i, Role: t.role, Name: t.name, Value: t.value, CSS: t.css,
			States: t.st, Parent: parent, Frame: frame,
		})
		for _, k := range t.kids {
			c := add(k, i, frame)
			raw.Nodes[i].Children = append(raw.Nodes[i].Children, c)
		}
		return i
	}
	for _, r := range roots {
		root := add(r, -1, r.frame)
		raw.Frames = append(raw.Frames, domain.Frame{
			ID: "F" + r.frame, Name: r.frame, Path: r.frame,
			URL: "https://bank.example/" + r.frame, HTTPStatus: 200, Root: root,
		})
	}
	return perception.Normalize(raw)
}

// find returns the index of the k-th (0-based) visible node with role and
// name.
func find(tb testing.TB, s *domain.UiSnapshot, role, name string, k int) int {
	tb.Helper()
	for i, nd := range s.Nodes {
		if nd.Role == role && nd.Name == name && !nd.States.Hidden {
			if k == 0 {
				return i
			}
			k--
		}
	}
	tb.Fatalf("no %s %q", role, name)
	return -1
}

func ptr[T any](v T) *T { return &v }

func exact(s string) *domain.NameMatch { return &domain.NameMatch{Value: s, Match: domain.MatchExact} }

// desk is the main fixture: a member desk with a search form, an accounts
// table, a navigation landmark and a content frame.
func desk(tb testing.TB) *domain.UiSnapshot {
	tb.Helper()
	return build(tb,
		n("document", "Member desk",
			n("generic", "",
				n("banner", "", n("heading", "CU Back Office", text("CU Back Office"))),
				n("navigation", "Primary",
					n("link", "Members", text("Members")),
					n("link", "Search", text("Search")),
				),
				n("main", "",
					n("heading", "Member search", text("Member search")),
					n("form", "Member lookup",
						n("generic", "",
							n("label", "", text("Member ID")),
							n("textbox", "Member ID").val("12345").withCSS("#member-id").state(domain.NodeStates{Focusable: true, Editable: true}),
						),
						n("button", "Search", text("Search")).withCSS("#search-btn"),
						n("button", "Clear", text("Clear")),
						n("searchbox", "Quick find"),
					),
					n("heading", "Accounts", text("Accounts")),
					n("table", "",
						n("row", "",
							n("columnheader", "Account", text("Account")),
							n("columnheader", "Balance", text("Balance")),
							n("columnheader", "Action", text("Action")),
						),
						n("row", "",
							n("cell", "Savings", text("Savings")),
							n("cell", "$1,234.56", text("$1,234.56")),
							n("cell", "", n("button", "Edit", text("Edit"))),
						),
						n("row", "",
							n("cell", "Checking", text("Checking")),
							n("cell", "$99.00", text("$99.00")),
							n("cell", "", n("button", "Edit", text("Edit"))),
						),
					),
					n("button", "Delete", text("Delete")).state(domain.NodeStates{Disabled: true}),
					n("button", "Archive", text("Archive").state(domain.NodeStates{Hidden: true})).state(domain.NodeStates{Hidden: true}),
					n("image", "Logo"),
				),
			),
		),
		n("document", "Content",
			n("heading", "Details", text("Details")),
			n("button", "Search", text("Search")),
		).in("content"),
		n("document", "Inner",
			n("button", "Help", text("Help")),
		).in("content/inner"),
	)
}
