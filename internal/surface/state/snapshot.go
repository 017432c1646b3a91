package state

import (
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// snapshotBuilder turns a contract State into a raw snapshot.
type snapshotBuilder struct {
	snap   *domain.UiSnapshot
	docs   map[string]int // frame path -> document node
	ids    map[string]int // control id -> node
	region map[int]regionRun
}

// regionRun is the region node that the last control placed directly in a
// document went into, so consecutive controls of one region share it.
type regionRun struct {
	name string
	node int // -1 when the last control had no region
}

// buildSnapshot returns the raw snapshot of st (Seq is set by the caller).
//
// Shape: a "document" root for the top document (named by the title) and
// one for each frame path the controls use, in order of first use, each
// registered in Frames (the top document first, with the state's URL and
// HTTP status; a frame's Name is the last element of its path). Every
// control becomes one node, Ref = its id, under its Parent control when
// that id names an earlier control, else in its frame's document; there,
// a run of consecutive controls with one non-empty Region is wrapped in a
// node of role "region" named by it, so that perception.Normalize gives
// them that Region. Boxes are synthetic: one 28-pixel line per node,
// indented by depth.
func buildSnapshot(st *State) *domain.UiSnapshot {
	b := &snapshotBuilder{
		snap: &domain.UiSnapshot{
			URL:        st.URL,
			Title:      st.Title,
			HTTPStatus: st.HTTPStatus,
			Nodes:      make([]domain.Node, 0, len(st.Controls)+2),
		},
		docs:   map[string]int{},
		ids:    make(map[string]int, len(st.Controls)),
		region: map[int]regionRun{},
	}
	if st.Dialog != nil {
		d := domain.Dialog{Type: st.Dialog.Type, Message: st.Dialog.Message}
		b.snap.Dialog = &d
	}
	b.document("")
	for i := range st.Controls {
		c := &st.Controls[i]
		parent, ok := b.ids[c.Parent]
		if c.Parent == "" || !ok {
			parent = b.container(c.Frame, c.Region)
		}
		role := controlRole(c.Role)
		n := domain.Node{
			Role:        role,
			Name:        c.Name,
			Value:       c.Value,
			Description: c.Description,
			Frame:       c.Frame,
			Region:      c.Region,
			Ref:         c.ID,
			Sensitive:   c.Sensitive || c.Password,
			States: domain.NodeStates{
				Focused:   c.Focused,
				Focusable: interactive(role) && !c.Disabled,
				Disabled:  c.Disabled,
				Editable:  editable(role) && !c.Disabled,
				Checked:   c.Checked,
				Selected:  c.Selected,
				Expanded:  c.Expanded,
				Password:  c.Password,
				Modal:     role == domain.RoleAlertDialog || (role == domain.RoleDialog && st.Dialog != nil),
			},
		}
		idx := b.add(parent, n)
		if c.ID != "" {
			if _, dup := b.ids[c.ID]; !dup {
				b.ids[c.ID] = idx
			}
		}
	}
	return b.snap
}

// controlRole maps a control's contract role to a canonical role. The
// contract speaks WAI-ARIA role names, so the mapping only folds ARIA's
// synonyms and case (domain.CanonicalRole); a control without a role is a
// generic container. This is the one place the state adapter maps roles.
func controlRole(role string) string {
	if role == "" {
		return domain.RoleGeneric
	}
	return domain.CanonicalRole(role)
}

// document returns the document node of a frame path, adding it (and its
// Frames entry) on first use.
func (b *snapshotBuilder) document(frame string) int {
	if d, ok := b.docs[frame]; ok {
		return d
	}
	name := ""
	f := domain.Frame{ID: "frame:" + frame, Name: frame[strings.LastIndexByte(frame, '/')+1:], Path: frame, URL: b.snap.URL}
	if frame == "" {
		name = b.snap.Title
		f.ID, f.HTTPStatus = "top", b.snap.HTTPStatus
	}
	d := b.add(-1, domain.Node{Role: domain.RoleDocument, Name: name, Frame: frame})
	f.Root = d
	b.snap.Frames = append(b.snap.Frames, f)
	b.docs[frame] = d
	return d
}

// container returns where a control without a parent goes: its frame's
// document, or the region node of the current run.
func (b *snapshotBuilder) container(frame, region string) int {
	doc := b.document(frame)
	if region == "" {
		b.region[doc] = regionRun{node: -1}
		return doc
	}
	if run, ok := b.region[doc]; ok && run.node >= 0 && run.name == region {
		return run.node
	}
	r := b.add(doc, domain.Node{Role: domain.RoleRegion, Name: region, Frame: frame, Region: region})
	b.region[doc] = regionRun{name: region, node: r}
	return r
}

// add appends n under parent (-1 for a root) with consistent Index,
// Parent, Children, Depth and a synthetic box, and returns its index.
func (b *snapshotBuilder) add(parent int, n domain.Node) int {
	i := len(b.snap.Nodes)
	n.Index, n.Parent, n.Depth, n.Children = i, parent, 0, nil
	if parent >= 0 {
		p := &b.snap.Nodes[parent]
		p.Children = append(p.Children, i)
		n.Depth = p.Depth + 1
	}
	indent := float64(16 * min(n.Depth, 10))
	n.Bounds = domain.Rect{X: 8 + indent, Y: 8 + 28*float64(i), W: 800 - indent, H: 24}
	b.snap.Nodes = append(b.snap.Nodes, n)
	return i
}

// interactive reports whether a control of the role takes focus.
func interactive(role string) bool {
	switch strings.ToLower(role) {
	case "button", "link", "textbox", "searchbox", "combobox", "checkbox", "radio",
		"option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch",
		"slider", "spinbutton", "treeitem", "listbox":
		return true
	}
	return false
}

// editable reports whether a control of the role takes typed text.
func editable(role string) bool {
	switch strings.ToLower(role) {
	case "textbox", "searchbox":
		return true
	}
	return false
}
