package desktop

import (
	"context"
	"errors"
	"strconv"

	"github.com/godbus/dbus/v5"
)

// maxNodes bounds one walk: a runaway tree (a huge table) is cut, not
// followed forever.
const maxNodes = 5000

// walk reads the visible accessible trees under the given windows, level by
// level with every call of a level in flight at once (one round trip per
// level, not per call). Invisible subtrees, closed menus and the popup
// lists of combo boxes are not entered. Objects that vanished mid-walk are left out.
func (b *bus) walk(ctx context.Context, windows []ref) ([]raw, error) {
	var out []raw
	type item struct {
		r      ref
		parent int
		depth  int
	}
	level := make([]item, 0, len(windows))
	for _, w := range windows {
		level = append(level, item{r: w, parent: -1})
	}
	for len(level) > 0 && len(out) < maxNodes {
		var p pending
		type calls struct{ role, st, ifs, props, kids *dbus.Call }
		cs := make([]calls, len(level))
		for i, it := range level {
			cs[i] = calls{
				role:  b.goCall(ctx, &p, it.r, ifAccessible+".GetRoleName"),
				st:    b.goCall(ctx, &p, it.r, ifAccessible+".GetState"),
				ifs:   b.goCall(ctx, &p, it.r, ifAccessible+".GetInterfaces"),
				props: b.goCall(ctx, &p, it.r, "org.freedesktop.DBus.Properties.GetAll", ifAccessible),
				kids:  b.goCall(ctx, &p, it.r, ifAccessible+".GetChildren"),
			}
		}
		if err := p.wait(ctx); err != nil {
			return nil, err
		}
		var next []item
		for i, it := range level {
			n, err := readNode(it.r, cs[i].role, cs[i].st, cs[i].ifs, cs[i].props, cs[i].kids)
			if err != nil {
				if errors.Is(err, errGone) {
					continue
				}
				return nil, err
			}
			if !n.states.has(stVisible) {
				continue
			}
			n.parent, n.depth = it.parent, it.depth
			idx := len(out)
			out = append(out, n)
			if n.role == "combo box" || (n.role == "menu" && !n.states.has(stShowing)) {
				continue // a closed popup's items are not on screen
			}
			for _, k := range n.children {
				next = append(next, item{r: k, parent: idx, depth: it.depth + 1})
			}
		}
		level = next
	}
	if err := b.details(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

func readNode(r ref, role, st, ifs, props, kids *dbus.Call) (raw, error) {
	n := raw{ref: r}
	for _, c := range []*dbus.Call{role, st, ifs, props, kids} {
		if c.Err != nil {
			return n, classify(c.Err)
		}
	}
	var list []string
	var all map[string]dbus.Variant
	if err := role.Store(&n.role); err != nil {
		return n, err
	}
	if err := st.Store((*[]uint32)(&n.states)); err != nil {
		return n, err
	}
	if err := ifs.Store(&list); err != nil {
		return n, err
	}
	if err := props.Store(&all); err != nil {
		return n, err
	}
	if err := kids.Store(&n.children); err != nil {
		return n, err
	}
	n.ifaces = make(map[string]bool, len(list))
	for _, s := range list {
		n.ifaces[s] = true
	}
	_ = all["Name"].Store(&n.name)
	_ = all["Description"].Store(&n.desc)
	return n, nil
}

// details reads, in one more round (two for combo boxes), what only some
// nodes have: screen extents, an editable text's content, a valued
// control's value, a combo box's selected item.
func (b *bus) details(ctx context.Context, nodes []raw) error {
	var p pending
	ext := make([]*dbus.Call, len(nodes))
	val := make([]*dbus.Call, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		if n.ifaces[ifComponent] && n.states.has(stShowing) {
			ext[i] = b.goCall(ctx, &p, n.ref, ifComponent+".GetExtents", coordScreen)
		}
		switch {
		case n.role == "combo box" && n.ifaces[ifSelection]:
			val[i] = b.goCall(ctx, &p, n.ref, ifSelection+".GetSelectedChild", int32(0))
		case isTextbox(n.role) && n.ifaces[ifText]:
			val[i] = b.goCall(ctx, &p, n.ref, ifText+".GetText", int32(0), int32(-1))
		case n.ifaces[ifValue]:
			val[i] = b.goCall(ctx, &p, n.ref, "org.freedesktop.DBus.Properties.Get", ifValue, "CurrentValue")
		}
	}
	if err := p.wait(ctx); err != nil {
		return err
	}
	var q pending
	sel := make([]*dbus.Call, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		if c := ext[i]; c != nil && c.Err == nil {
			var box struct{ X, Y, W, H int32 }
			if c.Store(&box) == nil {
				n.bounds = [4]int32{box.X, box.Y, box.W, box.H}
			}
		}
		c := val[i]
		if c == nil || c.Err != nil {
			continue
		}
		switch {
		case n.role == "combo box":
			var child ref
			if c.Store(&child) == nil && child.Path != "" && child.Path != "/org/a11y/atspi/null" {
				sel[i] = b.goCall(ctx, &q, child, "org.freedesktop.DBus.Properties.Get", ifAccessible, "Name")
			}
		case isTextbox(n.role):
			_ = c.Store(&n.value)
		default:
			var v dbus.Variant
			if c.Store(&v) == nil {
				if f, ok := v.Value().(float64); ok {
					n.value = strconv.FormatFloat(f, 'f', -1, 64)
				}
			}
		}
	}
	if err := q.wait(ctx); err != nil {
		return err
	}
	for i, c := range sel {
		if c != nil && c.Err == nil {
			var v dbus.Variant
			if c.Store(&v) == nil {
				nodes[i].value, _ = v.Value().(string)
			}
		}
	}
	return nil
}

func isTextbox(atspiRole string) bool { return Role(atspiRole) == "textbox" }
