package replay

import (
	"fmt"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
)

// humanDelta is what a person changed between the screen a run parked on
// (before) and the one handed back (after): the URLs, the nodes that
// appeared and went, and the controls whose value or checked state
// changed. A node is the same node in both when the surface gave it the
// same Ref (the browser's is frame, backend node and document); a node
// without one is matched by frame, path, role and name. Only nodes with a
// name or a value count. A sensitive or password node's values are never
// copied: its edit says only that it changed.
func humanDelta(before, after *domain.UiSnapshot) evidence.HumanDelta {
	d := evidence.HumanDelta{Added: []string{}, Removed: []string{}, Edited: []evidence.ValueEdit{}}
	if before == nil || after == nil {
		return d
	}
	d.URLBefore, d.URLAfter = before.URL, after.URL
	was := map[string]*domain.Node{}
	for i := range before.Nodes {
		if n := &before.Nodes[i]; counts(n) {
			was[nodeKey(n)] = n
		}
	}
	seen := map[string]bool{}
	for i := range after.Nodes {
		n := &after.Nodes[i]
		if !counts(n) {
			continue
		}
		k := nodeKey(n)
		seen[k] = true
		old, ok := was[k]
		switch {
		case !ok:
			d.AddedTotal++
			if len(d.Added) < evidence.MaxDeltaNodes {
				d.Added = append(d.Added, describe(n))
			}
		case old.Value != n.Value || old.States.Checked != n.States.Checked:
			d.EditedTotal++
			if len(d.Edited) < evidence.MaxDeltaNodes {
				d.Edited = append(d.Edited, edit(old, n))
			}
		}
	}
	for i := range before.Nodes {
		n := &before.Nodes[i]
		if counts(n) && !seen[nodeKey(n)] {
			d.RemovedTotal++
			if len(d.Removed) < evidence.MaxDeltaNodes {
				d.Removed = append(d.Removed, describe(n))
			}
		}
	}
	return d
}

func counts(n *domain.Node) bool { return n.Name != "" || n.Value != "" }

func nodeKey(n *domain.Node) string {
	if n.Ref != "" {
		return "ref " + n.Ref
	}
	return fmt.Sprintf("at %s|%s|%s|%s", n.Frame, n.Path, n.Role, n.Name)
}

func describe(n *domain.Node) string {
	s := fmt.Sprintf("%s %q", n.Role, n.Name)
	if n.Frame != "" {
		s += " in frame " + n.Frame
	}
	return s
}

func edit(old, n *domain.Node) evidence.ValueEdit {
	e := evidence.ValueEdit{Node: describe(n)}
	if old.Sensitive || n.Sensitive || old.States.Password || n.States.Password {
		e.Sensitive = true
		return e
	}
	e.Before, e.After = old.Value, n.Value
	if old.States.Checked != n.States.Checked {
		e.Before, e.After = checked(old), checked(n)
	}
	return e
}

func checked(n *domain.Node) string {
	if n.States.Checked {
		return "checked"
	}
	return "unchecked"
}
