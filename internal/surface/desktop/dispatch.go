package desktop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

// Dispatch performs one authorized action through AT-SPI:
//   - navigate (re)starts the application on the URL's document (the URL's
//     host must name this application); reload restarts it on the current
//     one;
//   - click runs the node's Action ("click", "press", "activate", "jump");
//   - type replaces an editable text's content (EditableText
//     SetTextContents) and checks it landed;
//   - select picks a combo box's or list's item by label (Selection);
//   - press_key Enter/space on a node, or on the focused node, runs its
//     activate or click action;
//   - focus grabs keyboard focus (Component GrabFocus);
//   - raw_input hit-tests the point (Component GetAccessibleAtPoint) and
//     clicks the node under it (focuses it when it is editable text), or
//     with a key, types it into the focused node (see rawKey).
//
// It refuses a zero action or an unbound secret with ErrUnauthorized, a node
// of another (or a replaced) application or window with ErrStale, and
// anything else with ErrUnsupported.
func (s *Surface) Dispatch(ctx context.Context, a policy.AuthorizedAction) (surface.Result, error) {
	if !a.Valid() {
		return surface.Result{}, fmt.Errorf("desktop dispatch: %w", surface.ErrUnauthorized)
	}
	if a.NeedsSecret() {
		return surface.Result{}, fmt.Errorf("desktop dispatch: secret %q is not bound: %w", a.SecretRef(), surface.ErrUnauthorized)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return surface.Result{}, err
	}
	var err error
	res := surface.Result{}
	switch a.Type() {
	case domain.ActNavigate:
		if err = s.checkURL(a.URL()); err == nil {
			err = s.open(ctx, a.URL())
			res.Navigated = err == nil
		}
	case domain.ActReload:
		if s.url == "" {
			err = errors.New("nothing to reload: no document is open")
		} else {
			err = s.open(ctx, s.url)
			res.Navigated = err == nil
		}
	case domain.ActClick:
		res.Navigated, err = s.click(ctx, a.Node())
	case domain.ActType:
		err = s.typeText(ctx, a.Node(), a.Text())
	case domain.ActSelect:
		err = s.selectLabel(ctx, a.Node(), a.Text())
	case domain.ActPressKey:
		res.Navigated, err = s.pressKey(ctx, a.Node(), a.Key())
	case domain.ActFocus:
		err = s.focus(ctx, a.Node())
	case domain.ActRawInput:
		x, y := a.Point()
		res.Navigated, err = s.rawInput(ctx, x, y, a.Key(), a.Node())
	default:
		err = surface.ErrUnsupported
	}
	res.URL = s.url
	if err != nil {
		return res, fmt.Errorf("desktop %s: %w", a.Type(), err)
	}
	s.gen++ // an action is a change the next ChangedSince must report
	return res, nil
}

// open (re)starts a launched application on doc; an attached one only
// takes doc as its document.
func (s *Surface) open(ctx context.Context, doc string) error {
	if len(s.cfg.Command) == 0 {
		s.url = doc
		return nil
	}
	return s.launch(ctx, doc)
}

// target resolves a node's Ref to a live object of this application.
func (s *Surface) target(ctx context.Context, n *domain.Node) (ref, states, error) {
	if n == nil || n.Ref == "" {
		return ref{}, nil, errors.New("the action needs a target node")
	}
	r, ok := parseRef(n.Ref)
	if !ok {
		return ref{}, nil, fmt.Errorf("node ref %q is not a desktop ref: %w", n.Ref, surface.ErrStale)
	}
	if r.Bus != s.appBus {
		return ref{}, nil, fmt.Errorf("%s %q belongs to an application that is gone: %w", n.Role, n.Name, surface.ErrStale)
	}
	var st states
	if err := s.bus.call(ctx, r, ifAccessible+".GetState", []any{(*[]uint32)(&st)}); err != nil {
		if errors.Is(err, errGone) {
			if _, werr := s.windows(ctx); werr != nil {
				return ref{}, nil, werr
			}
			return ref{}, nil, fmt.Errorf("%s %q: %w", n.Role, n.Name, surface.ErrStale)
		}
		return ref{}, nil, err
	}
	if st.has(27) { // STALE/DEFUNCT objects are gone
		return ref{}, nil, fmt.Errorf("%s %q: %w", n.Role, n.Name, surface.ErrStale)
	}
	return r, st, nil
}

// actionNames are the AT-SPI action names that mean "activate this", in
// order of preference.
var clickActions = []string{"click", "press", "jump", "activate", "toggle", "open"}

// doAction runs the first of the node's actions named in prefer.
func (s *Surface) doAction(ctx context.Context, r ref, prefer []string) error {
	var acts []struct{ Name, Desc, Key string }
	if err := s.bus.call(ctx, r, ifAction+".GetActions", []any{&acts}); err != nil {
		return fmt.Errorf("the node has no Action interface (%v): %w", err, surface.ErrUnsupported)
	}
	for _, want := range prefer {
		for i, a := range acts {
			if strings.EqualFold(a.Name, want) {
				var ok bool
				if err := s.bus.call(ctx, r, ifAction+".DoAction", []any{&ok}, int32(i)); err != nil {
					return fmt.Errorf("action %s: %w", a.Name, err)
				}
				if !ok {
					return fmt.Errorf("action %s refused: %w", a.Name, surface.ErrNotLanded)
				}
				return nil
			}
		}
	}
	return fmt.Errorf("the node offers no %s action: %w", strings.Join(prefer, "/"), surface.ErrUnsupported)
}

func (s *Surface) click(ctx context.Context, n *domain.Node) (bool, error) {
	r, st, err := s.target(ctx, n)
	if err != nil {
		return false, err
	}
	if !st.has(stEnabled) || !st.has(stSensitive) {
		return false, fmt.Errorf("%s %q is disabled: %w", n.Role, n.Name, surface.ErrNotLanded)
	}
	before := s.url
	if err := s.doAction(ctx, r, clickActions); err != nil {
		return false, err
	}
	if n.Role != domain.RoleLink {
		return false, nil
	}
	return s.awaitDocument(ctx, before), nil
}

// awaitDocument waits briefly for the main window to announce another
// document after a link was followed.
func (s *Surface) awaitDocument(ctx context.Context, before string) bool {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		wins, err := s.windows(ctx)
		if err != nil || len(wins) == 0 {
			return false
		}
		var desc string
		if s.bus.prop(ctx, wins[0], ifAccessible, "Description", &desc) == nil && strings.Contains(desc, "://") && desc != before {
			s.url = desc
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

func (s *Surface) typeText(ctx context.Context, n *domain.Node, text string) error {
	r, st, err := s.target(ctx, n)
	if err != nil {
		return err
	}
	if !st.has(stEditable) {
		return fmt.Errorf("%s %q is not editable: %w", n.Role, n.Name, surface.ErrNotLanded)
	}
	var ok bool
	if err := s.bus.call(ctx, r, ifEditableText+".SetTextContents", []any{&ok}, text); err != nil {
		return fmt.Errorf("%s %q has no EditableText interface (%v): %w", n.Role, n.Name, err, surface.ErrUnsupported)
	}
	var got string
	if err := s.bus.call(ctx, r, ifText+".GetText", []any{&got}, int32(0), int32(-1)); err != nil {
		return fmt.Errorf("read back %s %q: %w", n.Role, n.Name, err)
	}
	landed := got == text
	if n.States.Password {
		// A password field reads back as bullets: compare lengths only.
		landed = len([]rune(got)) == len([]rune(text))
	}
	if !ok || !landed {
		return fmt.Errorf("the text typed into %s %q did not land: %w", n.Role, n.Name, surface.ErrNotLanded)
	}
	return nil
}

// selectLabel selects the item labelled label among the node's items (a
// combo box's items sit in its popup menu).
func (s *Surface) selectLabel(ctx context.Context, n *domain.Node, label string) error {
	r, _, err := s.target(ctx, n)
	if err != nil {
		return err
	}
	items, err := s.children(ctx, r)
	if err != nil {
		return err
	}
	if len(items) == 1 {
		var role string
		if s.bus.call(ctx, items[0], ifAccessible+".GetRoleName", []any{&role}) == nil && (role == "menu" || role == "list") {
			if items, err = s.children(ctx, items[0]); err != nil {
				return err
			}
		}
	}
	for i, it := range items {
		var name string
		if s.bus.prop(ctx, it, ifAccessible, "Name", &name) != nil || strings.TrimSpace(name) != strings.TrimSpace(label) {
			continue
		}
		var ok bool
		if err := s.bus.call(ctx, r, ifSelection+".SelectChild", []any{&ok}, int32(i)); err != nil {
			return fmt.Errorf("%s %q has no Selection interface (%v): %w", n.Role, n.Name, err, surface.ErrUnsupported)
		}
		if !ok {
			return fmt.Errorf("selecting %q in %s %q was refused: %w", label, n.Role, n.Name, surface.ErrNotLanded)
		}
		return nil
	}
	return fmt.Errorf("%s %q has no option %q", n.Role, n.Name, label)
}

func (s *Surface) children(ctx context.Context, r ref) ([]ref, error) {
	var kids []ref
	if err := s.bus.call(ctx, r, ifAccessible+".GetChildren", []any{&kids}); err != nil {
		return nil, fmt.Errorf("list items: %w", err)
	}
	return kids, nil
}

// pressKey maps a key to the node's own action: Enter activates (an
// entry's "activate", a button's click), space clicks. Keys with no action
// equivalent need synthesized input, which this adapter does not send.
func (s *Surface) pressKey(ctx context.Context, n *domain.Node, key string) (bool, error) {
	if n == nil {
		v, err := s.read(ctx)
		if err != nil {
			return false, err
		}
		if v.focused == "" {
			return false, fmt.Errorf("key %s: no node has keyboard focus", key)
		}
		n = &domain.Node{Ref: v.focused, Role: "focused node"}
	}
	var prefer []string
	switch strings.ToLower(key) {
	case "enter", "return", "kp_enter":
		prefer = append([]string{"activate"}, clickActions...)
	case "space", " ":
		prefer = clickActions
	default:
		return false, fmt.Errorf("key %q has no accessibility action: %w", key, surface.ErrUnsupported)
	}
	r, _, err := s.target(ctx, n)
	if err != nil {
		return false, err
	}
	before := s.url
	if err := s.doAction(ctx, r, prefer); err != nil {
		return false, err
	}
	if n.Role == domain.RoleLink {
		return s.awaitDocument(ctx, before), nil
	}
	return false, nil
}

func (s *Surface) focus(ctx context.Context, n *domain.Node) error {
	r, _, err := s.target(ctx, n)
	if err != nil {
		return err
	}
	var ok bool
	if err := s.bus.call(ctx, r, ifComponent+".GrabFocus", []any{&ok}); err != nil {
		return fmt.Errorf("%s %q has no Component interface (%v): %w", n.Role, n.Name, err, surface.ErrUnsupported)
	}
	if !ok {
		return fmt.Errorf("%s %q refused focus: %w", n.Role, n.Name, surface.ErrNotLanded)
	}
	return nil
}

// rawClick clicks the deepest node under a screen point.
func (s *Surface) rawClick(ctx context.Context, x, y float64) (bool, error) {
	wins, err := s.windows(ctx)
	if err != nil {
		return false, err
	}
	for _, w := range wins {
		hit, cur := false, w
		for range 64 {
			var next ref
			if err := s.bus.call(ctx, cur, ifComponent+".GetAccessibleAtPoint", []any{&next}, int32(x), int32(y), coordScreen); err != nil {
				break
			}
			if next.Path == "" || next.Path == "/org/a11y/atspi/null" || next == cur {
				break
			}
			cur, hit = next, true
		}
		if hit {
			if focused, err := s.focusAt(ctx, cur); focused {
				return false, err
			}
			n := &domain.Node{Ref: cur.String(), Role: "node at point"}
			return s.click(ctx, n)
		}
	}
	return false, fmt.Errorf("no node at (%.0f, %.0f): %w", x, y, surface.ErrNotLanded)
}
