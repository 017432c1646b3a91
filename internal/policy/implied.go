package policy

import (
	"slices"

	"github.com/cuahq/cua/internal/domain"
)

// ActionRisk is the risk policy judges an action by on snap: the larger of
// the risk of its own node (Classify) and the risk of what it sets off
// beyond that node (ImpliedRisk). The declared risk of a step is not part of
// it; Authorize compares the two.
func ActionRisk(snap *domain.UiSnapshot, a domain.Action, n *domain.Node) domain.Risk {
	r, _ := actionRisk(snap, a, n)
	return r
}

// actionRisk is ActionRisk with the control that carries the risk: n, or
// the control beyond it that ImpliedRisk found (nil when none carries any).
func actionRisk(snap *domain.UiSnapshot, a domain.Action, n *domain.Node) (domain.Risk, *domain.Node) {
	own := Classify(a, n)
	implied, by := impliedRisk(snap, a, n)
	if implied.Rank() > own.Rank() && by != nil {
		return implied, by
	}
	return domain.MaxRisk(own, implied), n
}

// ImpliedRisk is the risk an action carries beyond its own node: a key that
// submits (Enter, Space on a button) takes the highest name risk of the
// buttons in the same frame and region as the node it lands on, or as the
// focused node when it names none.
//
// A click (or raw pointer input) reaches more than its node: the handler of
// its nearest actionable ancestor runs (the text inside a button, an image
// in a link), and so does that of an actionable descendant whose box holds
// the point the click lands on (the centre of the node's box: a table cell
// or a group whose centre is a button). The click carries the highest risk
// of those controls. The surface checks the same at the moment it clicks,
// with what the page really holds under the point (AuthorizedAction.Admits):
// a label that forwards its click, a control the snapshot does not show.
func ImpliedRisk(snap *domain.UiSnapshot, a domain.Action, n *domain.Node) domain.Risk {
	r, _ := impliedRisk(snap, a, n)
	return r
}

func impliedRisk(snap *domain.UiSnapshot, a domain.Action, n *domain.Node) (domain.Risk, *domain.Node) {
	if (a.Type == domain.ActClick || a.Type == domain.ActRawInput) && snap != nil && n != nil {
		risk, by := domain.RiskSafe, (*domain.Node)(nil)
		consider := func(c *domain.Node) {
			if r := Classify(domain.Action{Type: domain.ActClick}, c); by == nil || r.Rank() > risk.Rank() {
				risk, by = r, c
			}
		}
		if anc := ActionableAncestor(snap, n); anc != nil {
			consider(anc)
		}
		x, y := n.Bounds.Center()
		if a.Type == domain.ActRawInput {
			x, y = a.X, a.Y
		}
		if !n.Bounds.Empty() || a.Type == domain.ActRawInput {
			for _, d := range ActionableDescendantsAt(snap, n, x, y) {
				consider(d)
			}
		}
		return risk, by
	}
	if a.Type != domain.ActPressKey || snap == nil || !submitKey(a.Key) {
		return domain.RiskSafe, nil
	}
	if n == nil {
		for i := range snap.Nodes {
			if snap.Nodes[i].States.Focused {
				n = &snap.Nodes[i]
				break
			}
		}
	}
	if n == nil {
		// Nothing known has focus: the key may submit anything on screen.
		risk, by := domain.RiskSafe, (*domain.Node)(nil)
		for i := range snap.Nodes {
			if b := &snap.Nodes[i]; b.Role == "button" {
				if r := NameRisk(b.Name + " " + b.Description); r.Rank() > risk.Rank() {
					risk, by = r, b
				}
			}
		}
		return risk, by
	}
	risk, by := Classify(domain.Action{Type: domain.ActClick}, n), n
	for i := range snap.Nodes {
		b := &snap.Nodes[i]
		if b.Role == "button" && b.Frame == n.Frame && b.Region == n.Region {
			if r := NameRisk(b.Name + " " + b.Description); r.Rank() > risk.Rank() {
				risk, by = r, b
			}
		}
	}
	return risk, by
}

// ActionableDescendantsAt returns the actionable descendants of n whose box
// holds the point (x, y) (page coordinates, as Node.Bounds): a click there
// lands on them, whatever node the action named. The walk visits each node
// once, so a malformed tree cannot loop, and n itself is not returned.
func ActionableDescendantsAt(snap *domain.UiSnapshot, n *domain.Node, x, y float64) []*domain.Node {
	var out []*domain.Node
	seen := make(map[int]bool, 8)
	stack := slices.Clone(n.Children)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i < 0 || i >= len(snap.Nodes) || seen[i] || i == n.Index {
			continue
		}
		seen[i] = true
		c := &snap.Nodes[i]
		if actionableRoles[c.Role] && !c.Bounds.Empty() && c.Bounds.Contains(x, y) {
			out = append(out, c)
		}
		stack = append(stack, c.Children...)
	}
	return out
}

// submitKey reports keys that activate a form or a control: Enter and Space
// under any of their names.
func submitKey(k string) bool {
	switch k {
	case "Enter", "Return", "\r", "\n", "\r\n", "Space", "Spacebar", " ":
		return true
	}
	return false
}

// actionableRoles are the canonical roles whose element receives a click's
// effect.
var actionableRoles = map[string]bool{
	"button": true, "link": true, "menuitem": true, "menuitemcheckbox": true, "menuitemradio": true,
	"tab": true, "checkbox": true, "radio": true, "switch": true, "option": true, "treeitem": true,
}

// ActionableAncestor returns the nearest actionable ancestor of n (n's own
// role excluded), or nil when n is itself actionable or has none. The walk
// is bounded by the snapshot's size, so a malformed parent chain cannot loop.
func ActionableAncestor(snap *domain.UiSnapshot, n *domain.Node) *domain.Node {
	if actionableRoles[n.Role] {
		return nil
	}
	p := n.Parent
	for range len(snap.Nodes) {
		if p < 0 || p >= len(snap.Nodes) {
			return nil
		}
		if q := &snap.Nodes[p]; actionableRoles[q.Role] {
			return q
		}
		p = snap.Nodes[p].Parent
	}
	return nil
}
