package sim

import (
	"strconv"

	"github.com/cuahq/cua/internal/domain"
)

// tree builds a well-formed raw snapshot: Index, Parent, Children and Depth
// kept consistent, Frame inherited from the parent, a plausible box for
// every node (one 28-pixel line each, indented by depth) and a Ref for every
// node (prefix + index unless the caller names one).
type tree struct {
	snap   *domain.UiSnapshot
	prefix string
}

func newTree(url, title, refPrefix string) *tree {
	return &tree{snap: &domain.UiSnapshot{URL: url, Title: title}, prefix: refPrefix}
}

// add appends n under parent (-1 for a root) and returns its index.
func (t *tree) add(parent int, n domain.Node) int {
	i := len(t.snap.Nodes)
	n.Index, n.Parent, n.Depth = i, parent, 0
	n.Children = nil
	if parent >= 0 {
		p := &t.snap.Nodes[parent]
		p.Children = append(p.Children, i)
		n.Depth = p.Depth + 1
		if n.Frame == "" {
			n.Frame = p.Frame
		}
	}
	if n.Ref == "" {
		n.Ref = t.prefix + "#" + strconv.Itoa(i)
	} else {
		n.Ref = t.prefix + "/" + n.Ref
	}
	indent := float64(16 * min(n.Depth, 10))
	n.Bounds = domain.Rect{X: 8 + indent, Y: 8 + 28*float64(i), W: 480 - indent, H: 24}
	t.snap.Nodes = append(t.snap.Nodes, n)
	return i
}

// document adds the root of a document (the top one for frame "") and
// registers it in Frames.
func (t *tree) document(frame, url, title string, status int) int {
	root := t.add(-1, domain.Node{Role: domain.RoleDocument, Name: title, Frame: frame, Ref: "doc:" + frame})
	t.snap.Frames = append(t.snap.Frames, domain.Frame{
		ID: "frame:" + frame, Name: frame, Path: frame, URL: url, HTTPStatus: status, Root: root,
	})
	return root
}

// text adds a static text node.
func (t *tree) text(parent int, s string) int {
	return t.add(parent, domain.Node{Role: domain.RoleText, Name: s})
}

// dialog adds a JavaScript dialog: an alertdialog root named by the message
// with the buttons OK (accept) and, unless it is an alert, Cancel, each
// described by the message; it sets Snapshot.Dialog.
func (t *tree) dialog(d domain.Dialog) {
	cp := d
	t.snap.Dialog = &cp
	root := t.add(-1, domain.Node{Role: "alertdialog", Name: d.Message, Ref: "dialog", States: domain.NodeStates{Modal: true}})
	focus := domain.NodeStates{Focusable: true}
	t.add(root, domain.Node{Role: "button", Name: "OK", Description: d.Message, Ref: "dialog:ok", States: focus})
	if d.Type != "alert" {
		t.add(root, domain.Node{Role: "button", Name: "Cancel", Description: d.Message, Ref: "dialog:cancel", States: focus})
	}
}
