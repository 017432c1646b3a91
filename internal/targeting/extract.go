package targeting

import (
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// isInput reports whether the node holds user-entered or selected text in
// its Value (its Name is a label, not its content).
func isInput(n *domain.Node) bool {
	switch n.Role {
	case "textbox", "searchbox", "combobox", "spinbutton", "slider":
		return true
	}
	return n.States.Editable
}

// ExtractText returns what an extract step reads from the resolved node:
// for an input (textbox, searchbox, combobox, spinbutton, slider, or any
// editable node) its Value, even when empty; otherwise its visible text
// (perception.Text). When the node was found as an inline label
// (res.Label, "Name: Jane Roe" for anchor "Name:"), the label and the
// separators after it are dropped ("Jane Roe"), so a label and its value
// in one text node read like the same pair split over two elements. It
// returns "" when res names no node of s.
func ExtractText(s *domain.UiSnapshot, res Resolution) string {
	if s == nil || res.Node < 0 || res.Node >= len(s.Nodes) {
		return ""
	}
	if n := &s.Nodes[res.Node]; isInput(n) {
		return n.Value
	}
	t := perception.Text(s, res.Node)
	if res.Label != "" {
		t = dropLabel(t, res.Label)
	}
	return t
}

// dropLabel removes the shortest prefix of t whose Fold equals the label's,
// and the white space and separators (: - – —) after it. t is returned
// unchanged when no prefix folds to the label.
func dropLabel(t, label string) string {
	want := perception.Fold(label)
	if want == "" {
		return t
	}
	for i := range t {
		if i == 0 {
			continue
		}
		if perception.FoldEqual(t[:i], want) {
			return strings.TrimLeft(t[i:], " \t\n\r\u00a0:-–—")
		}
	}
	return t
}

// valueOf is what node_has_value compares: an input's Value, else the
// node's Value when it has one, else its visible text.
func valueOf(s *domain.UiSnapshot, i int) string {
	n := &s.Nodes[i]
	if isInput(n) || n.Value != "" {
		return n.Value
	}
	return perception.Text(s, i)
}
