package policy

import "github.com/cuahq/cua/internal/domain"

// ActionRisk is the risk policy judges an action by on snap: the larger of
// the risk of its own node (Classify) and the risk of what it sets off
// beyond that node (ImpliedRisk). The declared risk of a step is not part of
// it; Authorize compares the two.
func ActionRisk(snap *domain.UiSnapshot, a domain.Action, n *domain.Node) domain.Risk {
	return domain.MaxRisk(Classify(a, n), ImpliedRisk(snap, a, n))
}

// ImpliedRisk is the risk an action carries beyond its own node: a key that
// submits (Enter, Space on a button) takes the highest name risk of the
// buttons in the same frame and region as the node it lands on, or as the
// focused node when it names none.
//
// A click (or raw pointer input) on a node that does not act by itself (the
// text inside a button, an image in a link) carries the risk of its nearest
// actionable ancestor: that is the control whose handler runs.
func ImpliedRisk(snap *domain.UiSnapshot, a domain.Action, n *domain.Node) domain.Risk {
	if (a.Type == domain.ActClick || a.Type == domain.ActRawInput) && snap != nil && n != nil {
		if anc := ActionableAncestor(snap, n); anc != nil {
			return Classify(domain.Action{Type: domain.ActClick}, anc)
		}
		return domain.RiskSafe
	}
	if a.Type != domain.ActPressKey || snap == nil || !submitKey(a.Key) {
		return domain.RiskSafe
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
		risk := domain.RiskSafe
		for i := range snap.Nodes {
			if b := &snap.Nodes[i]; b.Role == "button" {
				risk = domain.MaxRisk(risk, NameRisk(b.Name+" "+b.Description))
			}
		}
		return risk
	}
	risk := Classify(domain.Action{Type: domain.ActClick}, n)
	for i := range snap.Nodes {
		b := &snap.Nodes[i]
		if b.Role == "button" && b.Frame == n.Frame && b.Region == n.Region {
			risk = domain.MaxRisk(risk, NameRisk(b.Name+" "+b.Description))
		}
	}
	return risk
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
