package perception

import (
	"math/rand/v2"
	"strconv"

	"github.com/cuahq/cua/internal/domain"
)

// Synthetic returns a RAW snapshot of about n nodes (at least n, and at most
// about a hundred more), shaped like a browser adapter's snapshot of a
// back-office page (canonical roles), for benchmarks and tests. It is deterministic for a given (n, seed):
// the seed drives an explicit PCG generator, never a global one.
//
// Shape: a top document ("") with a banner, a navigation landmark
// ("Primary") and a main landmark holding numbered sections. Section S has a
// heading "Section S", a form named "Search S" (a "Member ID" label and
// textbox, buttons "Search" and "Clear"), and a layout table whose rows are
// [label cell "Account S.R"] [value cell "$…"] [cell with an "Edit"
// button], so "Edit" and "Search" are ambiguous across sections while
// "Section S" and "Account S.R" are unique. About a tenth of the nodes sit
// in an iframe whose document is frame "content" (linked under the Iframe
// node for even seeds, parentless for odd ones). The last section of the top
// document is titled "Final" and holds the only button named "Submit final".
// Containers are wrapped in unnamed generic nodes, some table cells are
// empty, and some nodes are hidden, so [Normalize] has
// noise to drop.
func Synthetic(n int, seed int64) *domain.UiSnapshot {
	b := &synth{
		rng: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		s: &domain.UiSnapshot{
			URL:        "https://bank.example/members",
			Title:      "Synthetic bank",
			HTTPStatus: 200,
			Nodes:      make([]domain.Node, 0, n+64),
		},
	}
	top := b.add(-1, domain.RoleDocument, "Synthetic bank")
	b.s.Frames = append(b.s.Frames, domain.Frame{ID: "F0", Path: "", URL: b.s.URL, HTTPStatus: 200, Root: top})
	page := b.add(top, "generic", "")
	banner := b.add(page, "banner", "")
	b.heading(banner, "Synthetic bank", 1)
	nav := b.add(page, "navigation", "Primary")
	list := b.add(nav, "list", "")
	for i := 0; i < 5; i++ {
		li := b.add(list, "listitem", "")
		b.link(li, "Nav "+strconv.Itoa(i))
	}
	main := b.add(page, "main", "")

	topBudget := n - n/10
	sec := 0
	iframe := -1
	for len(b.s.Nodes)+100 < topBudget {
		b.section(main, sec, "Section "+strconv.Itoa(sec))
		sec++
		if iframe < 0 && len(b.s.Nodes) > topBudget/2 {
			iframe = b.add(main, domain.RoleIframe, "Details")
		}
	}
	if iframe < 0 {
		iframe = b.add(main, domain.RoleIframe, "Details")
	}
	b.section(main, sec, "Final")
	fin := b.s.Nodes[main].Children[len(b.s.Nodes[main].Children)-1]
	b.button(fin, "Submit final")

	// The iframe's document.
	b.frame = "content"
	parent := iframe
	if seed%2 != 0 {
		parent = -1
	}
	root := b.add(parent, domain.RoleDocument, "Details")
	b.s.Frames = append(b.s.Frames, domain.Frame{ID: "F1", Name: "content", Path: "content", URL: b.s.URL + "/details", HTTPStatus: 200, Root: root})
	body := b.add(root, "generic", "")
	for i := 0; len(b.s.Nodes) < n; i++ {
		b.section(body, sec+1+i, "Detail "+strconv.Itoa(i))
	}
	return b.s
}

type synth struct {
	s     *domain.UiSnapshot
	rng   *rand.Rand
	frame string
}

func (b *synth) add(parent int, role, name string) int {
	i := len(b.s.Nodes)
	b.s.Nodes = append(b.s.Nodes, domain.Node{
		Index:  i,
		Role:   role,
		Name:   name,
		Parent: parent,
		Frame:  b.frame,
		Ref:    strconv.Itoa(i),
	})
	if parent >= 0 {
		b.s.Nodes[parent].Children = append(b.s.Nodes[parent].Children, i)
	}
	return i
}

func (b *synth) text(parent int, s string) {
	b.add(parent, domain.RoleText, s)
}

func (b *synth) heading(parent int, name string, level int) {
	h := b.add(parent, "heading", name)
	b.s.Nodes[h].Value = strconv.Itoa(level)
	b.text(h, name)
}

func (b *synth) link(parent int, name string) {
	l := b.add(parent, "link", name)
	b.s.Nodes[l].States.Focusable = true
	b.text(l, name)
}

func (b *synth) button(parent int, name string) int {
	bt := b.add(parent, "button", name)
	b.s.Nodes[bt].States.Focusable = true
	b.s.Nodes[bt].CSS = "button.btn"
	b.text(bt, name)
	return bt
}

// section adds one section: heading, search form, account table, a
// paragraph and some noise.
func (b *synth) section(parent, sec int, title string) {
	s := strconv.Itoa(sec)
	wrap := b.add(parent, "generic", "")
	b.heading(wrap, title, 2)

	form := b.add(wrap, "form", "Search "+s)
	field := b.add(form, "generic", "")
	label := b.add(field, domain.RoleLabel, "")
	b.text(label, "Member ID")
	tb := b.add(field, "textbox", "Member ID")
	b.s.Nodes[tb].States.Focusable = true
	b.s.Nodes[tb].States.Editable = true
	b.s.Nodes[tb].CSS = "#member-id-" + s
	if b.rng.IntN(2) == 0 {
		b.s.Nodes[tb].Value = strconv.Itoa(10000 + b.rng.IntN(90000))
	}
	b.button(form, "Search")
	b.button(form, "Clear")

	table := b.add(wrap, domain.RoleTable, "")
	rows := 2 + b.rng.IntN(5)
	for r := 0; r < rows; r++ {
		row := b.add(table, domain.RoleRow, "")
		label := "Account " + s + "." + strconv.Itoa(r)
		c := b.add(row, domain.RoleCell, label)
		b.text(c, label)
		value := "$" + strconv.Itoa(b.rng.IntN(100000)) + "." + strconv.Itoa(10+b.rng.IntN(90))
		c = b.add(row, domain.RoleCell, value)
		b.text(c, value)
		c = b.add(row, domain.RoleCell, "")
		b.button(c, "Edit")
	}

	p := b.add(wrap, "paragraph", "")
	b.text(p, "Balances as of\u00a0today,  in  USD.")
	b.text(p, "Contact support for corrections.")
	if b.rng.IntN(4) == 0 {
		// A browser flags every node of a hidden subtree.
		h := b.button(wrap, "Hidden action")
		for i := h; i < len(b.s.Nodes); i++ {
			b.s.Nodes[i].States.Hidden = true
		}
	}
}
