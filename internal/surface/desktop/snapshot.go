package desktop

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// view is one read of the application: its snapshot (Seq unset) and the
// facts the adapter acts on.
type view struct {
	snap    *domain.UiSnapshot
	hash    uint64
	focused string // Ref of the focused node, "" when none
	url     string // the document the main window announces, "" when none
	main    ref    // the window shown as the top document
}

// build turns a walk of the application's windows into a snapshot. The
// first ordinary window is the top document (frame path ""); every other
// window is a frame whose path and name are its title (scope.frame names a
// window by title). An alert window (a toolkit's message box) is shown as
// the port's dialog: a parentless alertdialog node named by the message
// with its buttons as children, and Snapshot.Dialog set (confirm with two
// buttons or more, alert with one).
//
// The top document is main when it is among the windows, else the largest
// ordinary window (toolkits list windows in no documented order).
func build(nodes []raw, fallbackURL string, main ref) view {
	v := view{snap: &domain.UiSnapshot{URL: fallbackURL}}
	h := fnv.New64a()
	for _, n := range nodes {
		h.Write([]byte(n.role + "\x00" + n.name + "\x00" + n.value + "\x00" + n.desc + "\x00"))
		for _, w := range n.states {
			h.Write([]byte(strconv.FormatUint(uint64(w), 16) + ","))
		}
		h.Write([]byte(strconv.Itoa(len(n.children)) + "|" + strconv.Itoa(n.parent) + ";"))
	}
	v.hash = h.Sum64()
	paths := map[string]int{}
	own := owners(nodes)
	top := true
	for _, i := range windowOrder(nodes, main) {
		if nodes[i].role == "alert" {
			v.addAlert(nodes, own, i)
			continue
		}
		path := ""
		if !top {
			path = uniquePath(paths, nodes[i].name)
		} else if strings.Contains(nodes[i].desc, "://") {
			v.url = nodes[i].desc
			v.snap.URL = v.url
		}
		if top {
			v.snap.Title = nodes[i].name
			v.main = nodes[i].ref
		}
		top = false
		v.addWindow(nodes, own, i, path)
	}
	return v
}

// windowOrder returns the indexes of the window roots, the top document
// first.
func windowOrder(nodes []raw, main ref) []int {
	var roots []int
	best, bestArea := -1, int64(-1)
	for i, n := range nodes {
		if n.parent != -1 {
			continue
		}
		roots = append(roots, i)
		if n.role == "alert" {
			continue
		}
		area := int64(n.bounds[2]) * int64(n.bounds[3])
		if n.ref == main {
			area = 1 << 62
		}
		if area > bestArea {
			best, bestArea = i, area
		}
	}
	if best <= 0 {
		return roots
	}
	order := []int{best}
	for _, i := range roots {
		if i != best {
			order = append(order, i)
		}
	}
	return order
}

func uniquePath(seen map[string]int, title string) string {
	if title == "" {
		title = "window"
	}
	seen[title]++
	if seen[title] == 1 {
		return title
	}
	return title + "[" + strconv.Itoa(seen[title]) + "]"
}

// owners returns, for each node, the index of its window. The walk is
// breadth-first, so a parent always comes before its children.
func owners(nodes []raw) []int {
	own := make([]int, len(nodes))
	for i, n := range nodes {
		own[i] = i
		if n.parent != -1 {
			own[i] = own[n.parent]
		}
	}
	return own
}

func (v *view) addWindow(nodes []raw, own []int, root int, path string) {
	s := v.snap
	idx := map[int]int{}
	for i := root; i < len(nodes); i++ {
		if own[i] != root {
			continue
		}
		n := &nodes[i]
		node := toNode(n, len(s.Nodes), path)
		if i == root {
			node.Role = domain.RoleDocument
			node.Description = ""
			s.Frames = append(s.Frames, domain.Frame{ID: n.ref.String(), Name: path, Title: n.name, Path: path, URL: v.url, Root: node.Index})
			if path != "" {
				s.Frames[len(s.Frames)-1].URL = ""
			}
		} else {
			node.Parent = idx[n.parent]
			p := &s.Nodes[node.Parent]
			p.Children = append(p.Children, node.Index)
		}
		if node.States.Focused {
			v.focused = node.Ref
		}
		idx[i] = node.Index
		s.Nodes = append(s.Nodes, node)
	}
}

func (v *view) addAlert(nodes []raw, own []int, root int) {
	s := v.snap
	var msg []string
	var buttons []int
	for i := root + 1; i < len(nodes); i++ {
		if own[i] != root {
			continue
		}
		switch Role(nodes[i].role) {
		case domain.RoleText, domain.RoleHeading, domain.RoleParagraph:
			if t := strings.TrimSpace(nodes[i].name); t != "" {
				msg = append(msg, t)
			}
		case domain.RoleButton:
			buttons = append(buttons, i)
		}
	}
	message := strings.Join(msg, "\n")
	dlg := toNode(&nodes[root], len(s.Nodes), "")
	dlg.Role, dlg.Name, dlg.Description = domain.RoleAlertDialog, message, ""
	dlg.States.Modal = true
	s.Nodes = append(s.Nodes, dlg)
	for _, b := range buttons {
		node := toNode(&nodes[b], len(s.Nodes), "")
		node.Parent = dlg.Index
		node.Description = message
		if node.States.Focused {
			v.focused = node.Ref
		}
		s.Nodes[dlg.Index].Children = append(s.Nodes[dlg.Index].Children, node.Index)
		s.Nodes = append(s.Nodes, node)
	}
	if s.Dialog == nil {
		kind := "alert"
		if len(buttons) > 1 {
			kind = "confirm"
		}
		s.Dialog = &domain.Dialog{Type: kind, Message: message}
	}
}

func toNode(n *raw, index int, frame string) domain.Node {
	node := domain.Node{
		Index:       index,
		Role:        Role(n.role),
		Name:        n.name,
		Value:       n.value,
		Description: n.desc,
		Frame:       frame,
		Parent:      -1,
		Depth:       n.depth,
		Ref:         n.ref.String(),
		Bounds:      domain.Rect{X: float64(n.bounds[0]), Y: float64(n.bounds[1]), W: float64(n.bounds[2]), H: float64(n.bounds[3])},
	}
	st := n.states
	node.States = domain.NodeStates{
		Focused:   st.has(stFocused),
		Focusable: st.has(stFocusable),
		Disabled:  !st.has(stEnabled) || !st.has(stSensitive),
		Editable:  st.has(stEditable) && node.Role == domain.RoleTextbox,
		Checked:   st.has(stChecked) || (n.role == "toggle button" && st.has(stPressed)),
		Selected:  st.has(stSelected),
		Expanded:  st.has(stExpanded),
		Modal:     st.has(stModal),
		Password:  n.role == "password text",
	}
	if node.States.Password {
		node.Sensitive = true
		node.Value = strings.Repeat("•", len([]rune(n.value)))
	}
	if node.Role == domain.RoleTextbox || node.Role == domain.RoleCombobox {
		node.Description = ""
	}
	return node
}
