package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

// objectGroupPrefix names the group of remote objects one dispatch
// resolves: each dispatch has its own group ("cua-dispatch-N"), so the
// objects of one are never taken for another's.
const objectGroupPrefix = "cua-dispatch-"

// Page functions. They run in the session's isolated world on the resolved
// node (this), so the page cannot intercept them. A node inside the
// user-agent shadow tree of an <input> or <textarea> stands for its host.
const (
	jsHost = `let el = this; { const r = el.getRootNode && el.getRootNode(); if (r && r.host && /^(INPUT|TEXTAREA)$/.test(r.host.tagName)) el = r.host; }`

	jsInspect = `function() {
  if (!this.isConnected) return {state: 'gone', kind: ''};
  ` + jsHost + `
  const e = el.nodeType === 1 ? el : el.parentElement;
  let state = 'ok';
  if (e && (e.matches(':disabled') || e.closest('[aria-disabled="true"]'))) state = 'disabled';
  let kind = '';
  if (el.nodeType === 1) {
    const t = el.tagName;
    if (t === 'TEXTAREA' || (t === 'INPUT' && !/^(checkbox|radio|submit|button|reset|file|image|hidden|range|color)$/i.test(el.type))) kind = el.readOnly ? 'readonly' : 'field';
    else if (el.isContentEditable) kind = 'editable';
    else if (t === 'SELECT') kind = 'select';
    else if (t === 'OPTION' && el.closest('select')) kind = 'option';
  }
  return {state, kind, label: kind === 'option' ? el.label : '', password: el.nodeType === 1 && el.tagName === 'INPUT' && el.type === 'password'};
}`

	jsClear = `function(empty) {
  ` + jsHost + `
  const d = el.ownerDocument, w = d.defaultView;
  if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
    if (el.value !== '') {
      const proto = el.tagName === 'INPUT' ? w.HTMLInputElement.prototype : w.HTMLTextAreaElement.prototype;
      Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, '');
      el.dispatchEvent(new w.InputEvent('input', {bubbles: true, inputType: 'deleteContentBackward'}));
    }
    return true;
  }
  const r = d.createRange();
  r.selectNodeContents(el);
  const sel = d.getSelection();
  sel.removeAllRanges();
  sel.addRange(r);
  if (empty) d.execCommand('delete');
  return true;
}`

	jsRead = `function(secret) {
  ` + jsHost + `
  const v = (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') ? el.value : (el.textContent || '');
  return secret ? {len: v.length, connected: el.isConnected} : {value: v, len: v.length, connected: el.isConnected};
}`

	// jsFocused reports whether the node (or, for a contenteditable, a node
	// inside it) has keyboard focus, through open and closed shadow roots.
	jsFocused = `function() {
  ` + jsHost + `
  if (!el.isConnected) return {connected: false, focused: false};
  let a = el.ownerDocument.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  let focused = false;
  for (let n = a; n; n = n.parentNode || n.host) if (n === el) { focused = true; break; }
  return {connected: true, focused};
}`

	// jsActionable and jsDescribe are shared by jsHits and jsKeyReach:
	// actionable(el) says whether el receives a click's effect (the roles
	// policy calls actionable, explicit or implied by the element), and
	// describe(el) reports it as policy judges a control: role, accessible
	// name (aria-label, aria-labelledby, a button's value or alt, its text,
	// its title) and description, bounded in length.
	jsActionable = `
  const ACT = /^(button|link|menuitem|menuitemcheckbox|menuitemradio|tab|checkbox|radio|switch|option|treeitem)$/;
  const BTN = /^(button|submit|reset|image)$/i;
  const implicit = (el) => {
    const t = el.tagName;
    if (t === 'BUTTON' || t === 'SUMMARY') return 'button';
    if (t === 'INPUT') { if (BTN.test(el.type)) return 'button'; if (/^(checkbox|radio)$/i.test(el.type)) return el.type.toLowerCase(); return ''; }
    if ((t === 'A' || t === 'AREA') && el.hasAttribute('href')) return 'link';
    if (t === 'OPTION') return 'option';
    return '';
  };
  const roleOf = (el) => {
    const r = (el.getAttribute('role') || '').trim().toLowerCase().split(/\s+/)[0];
    return r || implicit(el);
  };
  const actionable = (el) => !!el && el.nodeType === 1 && ACT.test(roleOf(el));
  const clip = (s) => String(s || '').replace(/\s+/g, ' ').trim().slice(0, 200);
  const describe = (el) => {
    const d = el.ownerDocument;
    let name = clip(el.getAttribute('aria-label'));
    if (!name && el.hasAttribute('aria-labelledby')) name = clip(el.getAttribute('aria-labelledby').split(/\s+/).map((id) => { const e = d.getElementById(id); return e ? e.textContent : ''; }).join(' '));
    if (!name && el.tagName === 'INPUT') name = clip(el.type === 'image' ? el.alt : el.value) || (/^submit$/i.test(el.type) ? 'Submit' : /^reset$/i.test(el.type) ? 'Reset' : '');
    if (!name) name = clip(el.textContent);
    if (!name) name = clip(el.getAttribute('title'));
    const desc = clip(el.getAttribute('aria-description') || (el.getAttribute('title') !== name ? el.getAttribute('title') : ''));
    return {role: roleOf(el), name, desc};
  };`

	// jsHits reports whether a click at a point whose topmost element is
	// hit (null: the node itself) reaches the node: hit is the node, inside
	// it, one of its ancestors (the node itself lets pointer events
	// through), or the label of the control the node is. Otherwise it names
	// hit by tag and id only, never by its text.
	//
	// When it does, it also reports what the click reaches beyond the node
	// (policy judges those: AuthorizedAction.Admits): the actionable
	// ancestors of hit and of the node (through shadow hosts), the control a
	// <label> among them forwards its click to (for= or a wrapped control),
	// and the actionable descendants of the node whose box holds the click
	// point (the centre of the node's first box, px and py in its document's
	// viewport). The node itself is left out: Authorize judged it. With
	// raw set, the node is the element a raw pointer input lands on (hit is
	// null): it is reported too, and nothing below it is under the point.
	jsHits = `function(hit, raw) {
  if (!hit) hit = this;
  let ok = false;
  for (let n = hit; n && !ok; n = n.parentNode || n.host) if (n === this) ok = true;
  for (let n = this; n && !ok; n = n.parentNode || n.host) if (n === hit) ok = true;
  if (!ok && hit && hit.control && hit.control === this) ok = true;
  if (!ok) {
    const tag = hit && hit.tagName ? hit.tagName.toLowerCase() : 'node';
    return {ok: false, by: '<' + tag + (hit && hit.id ? ' id=' + hit.id.slice(0, 40) : '') + '>'};
  }
  ` + jsActionable + `
  const self = this, seen = new Set(raw ? [] : [self]), reached = [];
  const add = (el) => { if (el && el.nodeType === 1 && !seen.has(el) && reached.length < 32) { seen.add(el); reached.push(describe(el)); } };
  const up = (start) => {
    for (let n = start, i = 0; n && i < 256; n = n.parentNode || n.host, i++) {
      if (n.nodeType !== 1) continue;
      if (actionable(n)) add(n);
      if (n.tagName === 'LABEL' && n.control) add(n.control);
    }
  };
  up(hit);
  up(this);
  const el = this.nodeType === 1 ? this : this.parentElement;
  const box = !raw && el && el.getClientRects()[0];
  if (box && el.querySelectorAll) {
    const px = box.left + box.width / 2, py = box.top + box.height / 2;
    const all = el.querySelectorAll('button,a[href],area[href],input,summary,option,[role]');
    for (let i = 0; i < all.length && i < 2000; i++) {
      const d = all[i];
      if (!actionable(d)) continue;
      const r = d.getBoundingClientRect();
      if (r.width > 0 && r.height > 0 && px >= r.left && px < r.right && py >= r.top && py < r.bottom) add(d);
    }
  }
  return {ok: true, reached};
}`

	// jsKeyReach reports the controls a key reaches (policy judges them:
	// AuthorizedAction.Admits): the focused element (through shadow roots
	// and same-origin frames, from this node's document) when it is
	// actionable and the key is Enter or Space; and for Enter in a form
	// field, the form's default button, the one implicit submission
	// submits with.
	jsKeyReach = `function(key) {
  if (key !== 'Enter' && key !== ' ') return {reached: []};
  ` + jsActionable + `
  const doc = this.nodeType === 9 ? this : this.nodeType ? this.ownerDocument : this.document;
  let a = doc && doc.activeElement;
  for (let i = 0; a && i < 64; i++) {
    if (a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
    if (/^I?FRAME$/.test(a.tagName)) { let d = null; try { d = a.contentDocument; } catch (e) {} if (d && d.activeElement) { a = d.activeElement; continue; } }
    break;
  }
  const reached = [];
  if (!a || a.nodeType !== 1) return {reached};
  if (actionable(a)) reached.push(describe(a));
  if (key === 'Enter' && a.tagName === 'INPUT' && !BTN.test(a.type) && a.form) {
    const sub = Array.from(a.form.elements).find((e) => (e.tagName === 'BUTTON' && e.type === 'submit') || (e.tagName === 'INPUT' && /^(submit|image)$/i.test(e.type)));
    if (sub && sub !== a) reached.push(describe(sub));
  }
  return {reached};
}`

	jsSelect = `function(label) {
  let el = this;
  if (el.tagName === 'OPTION') el = el.closest('select');
  if (!el || el.tagName !== 'SELECT') return {err: 'not a <select>'};
  if (el.disabled) return {err: 'disabled'};
  const norm = (s) => String(s).replace(/\s+/g, ' ').trim();
  const opts = Array.from(el.options);
  let o = opts.find((o) => o.label === label || o.text === label);
  if (!o) o = opts.find((o) => norm(o.label) === norm(label) || norm(o.text) === norm(label));
  if (!o) return {err: 'missing', labels: opts.map((o) => norm(o.label))};
  if (o.disabled) return {err: 'option disabled'};
  if (o.selected && !el.multiple) return {value: norm(o.label)};
  if (el.multiple) o.selected = true; else el.selectedIndex = o.index;
  const w = el.ownerDocument.defaultView;
  el.dispatchEvent(new w.Event('input', {bubbles: true}));
  el.dispatchEvent(new w.Event('change', {bubbles: true}));
  return {value: norm(o.label)};
}`
)

// Dispatch performs one authorized action (see the package doc). It refuses
// an invalid AuthorizedAction, or one whose secret is not bound, with
// surface.ErrUnauthorized before touching the page; a node whose document,
// frame or element is gone (or that has no box) before anything was sent
// with surface.ErrStale; a reload of a POST-backed document (the snapshot's
// PostBacked) with surface.ErrResubmit, sending nothing; a click, key or
// raw input that would reach a control its authorization does not cover
// (the control under the click point, a label's control, a form's
// submitter: AuthorizedAction.Admits) with policy's denial wrapping
// surface.ErrUnauthorized, sending nothing; an engine-side
// action (extract, assert, wait_for) or an unknown key with
// surface.ErrUnsupported; and returns surface.ErrCrashed when the page is
// gone. An action that began but did not take effect as asked wraps
// surface.ErrNotLanded: a click whose target another element covers (no
// mouse event is sent), focus that another element took before typing or a
// key press (no text or key is sent), a typed value the field does not hold
// afterwards, a node that left its document during the action. Such errors
// give lengths, never a field's content. After an action that starts a navigation it waits, bounded by
// Options.CallTimeout, for the new documents' DOMContentLoaded.
func (s *Session) Dispatch(ctx context.Context, a policy.AuthorizedAction) (surface.Result, error) {
	if !a.Valid() {
		return surface.Result{}, fmt.Errorf("dispatch: %w", surface.ErrUnauthorized)
	}
	if a.NeedsSecret() {
		return surface.Result{}, fmt.Errorf("dispatch: secret %q is not bound: %w", a.SecretRef(), surface.ErrUnauthorized)
	}
	if err := s.usable(); err != nil {
		return surface.Result{}, err
	}
	var act func(context.Context) error
	switch a.Type() {
	case domain.ActClick:
		act = func(ctx context.Context) error { return s.click(ctx, a.Node(), a.Admits) }
	case domain.ActType:
		act = func(ctx context.Context) error { return s.typeText(ctx, a.Node(), a.Text(), a.SecretRef() != "") }
	case domain.ActSelect:
		act = func(ctx context.Context) error { return s.selectOption(ctx, a.Node(), a.Text()) }
	case domain.ActPressKey:
		act = func(ctx context.Context) error { return s.pressKey(ctx, a.Node(), a.Key(), a.Admits) }
	case domain.ActNavigate:
		act = func(ctx context.Context) error { return s.navigate(ctx, a.URL()) }
	case domain.ActReload:
		s.tr.mu.Lock()
		post := s.tr.postBacked()
		s.tr.mu.Unlock()
		if post {
			return surface.Result{URL: s.url()}, fmt.Errorf("dispatch reload: the page came from a submitted form: %w", surface.ErrResubmit)
		}
		act = s.reload
	case domain.ActFocus:
		act = func(ctx context.Context) error { return s.focus(ctx, a.Node()) }
	case domain.ActRawInput:
		act = func(ctx context.Context) error {
			if k := a.Key(); k != "" {
				// A key of a person at the console goes to whatever has focus.
				return s.pressKey(ctx, nil, k, a.Admits)
			}
			x, y := a.Point()
			return s.rawClick(ctx, x, y, a.Admits)
		}
	default:
		return surface.Result{}, fmt.Errorf("dispatch %s: %w", a.Type(), surface.ErrUnsupported)
	}
	s.tr.mu.Lock()
	before := s.tr.evSeq
	s.tr.mu.Unlock()
	s.objs = objectGroups{name: objectGroupPrefix + strconv.FormatUint(s.dispatches.Add(1), 10)}
	err := act(ctx)
	s.releaseObjects(ctx, s.objs)
	if err != nil {
		if uerr := s.usable(); uerr != nil && !errors.Is(err, surface.ErrCrashed) {
			err = fmt.Errorf("%w (%v)", uerr, err)
		}
		return surface.Result{URL: s.url()}, fmt.Errorf("%s: %w", a.Type(), err)
	}
	navigated := s.settle(ctx, before)
	return surface.Result{Navigated: navigated, URL: s.url()}, nil
}

func (s *Session) url() string {
	s.tr.mu.Lock()
	defer s.tr.mu.Unlock()
	return s.tr.topURL
}

func (s *Session) dialogOpen() bool {
	s.tr.mu.Lock()
	defer s.tr.mu.Unlock()
	return s.tr.dialog != nil
}

// settle reports whether a frame started navigating after event before and
// waits, bounded, until every such frame reached DOMContentLoaded (or stopped
// loading, or detached) or a dialog opened.
func (s *Session) settle(ctx context.Context, before uint64) bool {
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	for {
		s.tr.mu.Lock()
		navigated, pending := false, false
		for f, st := range s.tr.navStart {
			if st > before {
				navigated = true
				if s.tr.settled[f] < st {
					pending = true
				}
			}
		}
		dialog := s.tr.dialog != nil
		ch := s.tr.notify
		s.tr.mu.Unlock()
		if !pending || dialog {
			return navigated
		}
		select {
		case <-ch:
		case <-wctx.Done():
			return navigated
		case <-s.alive.Done():
			return navigated
		}
	}
}

// handle is a resolved node.
type handle struct {
	ts      *tsession
	backend cdp.BackendNodeID
	obj     runtime.RemoteObjectID
	frame   cdp.FrameID
	world   runtime.ExecutionContextID // 0: the main world
}

func parseRef(ref string) (frame cdp.FrameID, backend cdp.BackendNodeID, loader cdp.LoaderID, ok bool) {
	parts := strings.SplitN(ref, ":", 3)
	if len(parts) != 3 {
		return "", 0, "", false
	}
	id, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || id <= 0 || parts[0] == "" {
		return "", 0, "", false
	}
	return cdp.FrameID(parts[0]), cdp.BackendNodeID(id), cdp.LoaderID(parts[2]), true
}

func stale(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{surface.ErrStale}, args...)...)
}

// protocolErr reports whether err is the browser's answer to a bad request
// (an unknown node, a node without a box), not a transport failure.
func protocolErr(err error) bool {
	var e *cdproto.Error
	return errors.As(err, &e)
}

// resolve finds the node a Ref names in its current document.
func (s *Session) resolve(ctx context.Context, n *domain.Node) (*handle, error) {
	if n == nil {
		return nil, stale("no target node")
	}
	frame, backend, loader, ok := parseRef(n.Ref)
	if !ok {
		return nil, stale("node %q has no usable handle", n.Name)
	}
	s.mu.Lock()
	ts := s.frameTS[frame]
	s.mu.Unlock()
	s.tr.mu.Lock()
	wk, hasWorld := s.tr.frameCtx[frame]
	s.tr.mu.Unlock()
	if ts == nil {
		return nil, stale("the frame of %q is gone", n.Name)
	}
	// The frame's document is checked and the node resolved at once: a
	// resolved object only names the node, and it is used only when the
	// document is still the one the Ref was read from.
	var (
		tree    page.GetFrameTreeResult
		treeErr error
		wg      sync.WaitGroup
	)
	wg.Go(func() { tree, treeErr = call(ctx, s, ts, page.GetFrameTree, cdp.Empty{}) })
	s.objs.on(ts)
	p := dom.ResolveNodeParams{BackendNodeID: backend, ObjectGroup: s.objs.name}
	if hasWorld && wk.ts == ts {
		p.ExecutionContextID = wk.id
	}
	res, err := call(ctx, s, ts, dom.ResolveNode, p)
	if err != nil && p.ExecutionContextID != 0 && protocolErr(err) {
		p.ExecutionContextID = 0 // the world went away: use the main world
		res, err = call(ctx, s, ts, dom.ResolveNode, p)
	}
	wg.Wait()
	if treeErr != nil {
		return nil, treeErr
	}
	f := findFrame(tree.FrameTree, frame)
	if f == nil {
		return nil, stale("the frame of %q is gone", n.Name)
	}
	if f.LoaderID != loader {
		return nil, stale("the document of %q was replaced", n.Name)
	}
	if err != nil {
		if protocolErr(err) {
			return nil, stale("node %q: %v", n.Name, err)
		}
		return nil, err
	}
	if res.Object == nil || res.Object.ObjectID == "" {
		return nil, stale("node %q cannot be resolved", n.Name)
	}
	return &handle{ts: ts, backend: backend, obj: res.Object.ObjectID, frame: frame, world: p.ExecutionContextID}, nil
}

func findFrame(t *page.FrameTree, id cdp.FrameID) *cdp.Frame {
	if t == nil || t.Frame == nil {
		return nil
	}
	if t.Frame.ID == id {
		return t.Frame
	}
	for _, c := range t.ChildFrames {
		if f := findFrame(c, id); f != nil {
			return f
		}
	}
	return nil
}

// objectGroups is the object group of one dispatch and the targets it
// resolved objects on.
type objectGroups struct {
	name    string
	targets []*tsession
}

func (g *objectGroups) on(ts *tsession) {
	if !slices.Contains(g.targets, ts) {
		g.targets = append(g.targets, ts)
	}
}

// releaseObjects frees the remote objects of a dispatch on the targets it
// resolved them on. The round trip also lets the events of what the action
// started (a link's navigation request) arrive before settle looks for
// them, so it stays on the dispatch's path.
func (s *Session) releaseObjects(ctx context.Context, g objectGroups) {
	ctx = context.WithoutCancel(ctx)
	for _, ts := range g.targets {
		call(ctx, s, ts, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: g.name})
	}
}

// callFn calls a page function on the node and decodes its JSON result into
// out.
func (s *Session) callFn(ctx context.Context, h *handle, fn string, out any, args ...any) error {
	p := runtime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            h.obj,
		ReturnByValue:       new(true),
		Silent:              new(true),
	}
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		p.Arguments = append(p.Arguments, &runtime.CallArgument{Value: b})
	}
	res, err := call(ctx, s, h.ts, runtime.CallFunctionOn, p)
	if err != nil {
		if protocolErr(err) {
			return stale("%v", err)
		}
		return err
	}
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		return fmt.Errorf("page function: %s", msg)
	}
	if out == nil || res.Result == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

type nodeInfo struct {
	State    string `json:"state"`
	Kind     string `json:"kind"`  // field, readonly, editable, select, option or ""
	Label    string `json:"label"` // an option's label
	Password bool   `json:"password"`
}

// inspect checks that the node is still in its document and enabled.
func (s *Session) inspect(ctx context.Context, h *handle, n *domain.Node) (nodeInfo, error) {
	var info nodeInfo
	if err := s.callFn(ctx, h, jsInspect, &info); err != nil {
		return info, err
	}
	switch info.State {
	case "gone":
		return info, stale("node %q is no longer in the document", n.Name)
	case "disabled":
		return info, fmt.Errorf("node %q is disabled", n.Name)
	}
	return info, nil
}

// admitFunc is AuthorizedAction.Admits: the surface reports what an action
// really reaches just before it sends it, and policy judges it.
type admitFunc func(reached []domain.Node) error

// admit asks policy about what the action reaches. A refusal wraps
// surface.ErrUnauthorized (nothing was sent) and policy's denial, which
// names the control and carries POLICY_DENIED.
func admit(ok admitFunc, reached []domain.Node) error {
	if err := ok(reached); err != nil {
		return fmt.Errorf("%w: %w", surface.ErrUnauthorized, err)
	}
	return nil
}

// reachedNode is a control a page function reports an action reaches.
type reachedNode struct {
	Role string `json:"role"`
	Name string `json:"name"`
	Desc string `json:"desc"`
}

func reachedNodes(rs []reachedNode) []domain.Node {
	out := make([]domain.Node, 0, len(rs))
	for _, r := range rs {
		out = append(out, domain.Node{Index: -1, Parent: -1, Role: domain.CanonicalRole(r.Role), Name: r.Name, Description: r.Desc})
	}
	return out
}

func (s *Session) click(ctx context.Context, n *domain.Node, ok admitFunc) error {
	if n != nil {
		switch n.Ref {
		case refDialogAccept:
			return s.answerDialog(ctx, true)
		case refDialogDismiss:
			return s.answerDialog(ctx, false)
		}
	}
	if s.dialogOpen() {
		return errDialogOpen
	}
	h, err := s.resolve(ctx, n)
	if err != nil {
		return err
	}
	info, err := s.inspect(ctx, h, n)
	if err != nil {
		return err
	}
	if info.Kind == "option" {
		// The options of a <select> have no box: clicking one chooses it.
		return s.choose(ctx, h, n, info.Label)
	}
	x, y, err := s.centre(ctx, h, n)
	if err != nil {
		return err
	}
	reached, err := s.hitTest(ctx, h, n, x, y)
	if err != nil {
		return err
	}
	if err := admit(ok, reached); err != nil {
		return fmt.Errorf("click %q: %w", n.Name, err)
	}
	return s.mouseClick(ctx, h.ts, x, y)
}

// hitTest checks, before any mouse event is sent, that a click at (x, y)
// reaches the node and not an element covering it (an overlay, a popup).
// A covered node is refused with an error wrapping surface.ErrNotLanded:
// the screen is not what the step expects, so the caller classifies it
// before deciding; nothing was pressed. A click that reaches the node
// returns the other controls it reaches (jsHits), for policy to judge.
func (s *Session) hitTest(ctx context.Context, h *handle, n *domain.Node, x, y float64) ([]domain.Node, error) {
	loc, err := call(ctx, s, h.ts, dom.GetNodeForLocation, dom.GetNodeForLocationParams{
		X: int64(math.Round(x)), Y: int64(math.Round(y)), IncludeUserAgentShadowDOM: new(true),
	})
	if err != nil {
		if protocolErr(err) {
			return nil, fmt.Errorf("click %q: nothing at its centre (%g, %g): %w", n.Name, x, y, surface.ErrNotLanded)
		}
		return nil, err
	}
	if loc.FrameID != "" && loc.FrameID != h.frame && loc.BackendNodeID != h.backend {
		return nil, fmt.Errorf("click %q: its centre is covered by another frame's content: %w", n.Name, surface.ErrNotLanded)
	}
	// The node itself at its centre: jsHits takes null for it.
	hitArg := &runtime.CallArgument{Value: []byte("null")}
	if loc.BackendNodeID != h.backend {
		hit, err := call(ctx, s, h.ts, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: loc.BackendNodeID, ObjectGroup: s.objs.name, ExecutionContextID: h.world})
		if err != nil {
			if protocolErr(err) {
				return nil, fmt.Errorf("click %q: the element at its centre vanished: %w", n.Name, surface.ErrNotLanded)
			}
			return nil, err
		}
		if hit.Object == nil || hit.Object.ObjectID == "" {
			return nil, fmt.Errorf("click %q: the element at its centre cannot be resolved: %w", n.Name, surface.ErrNotLanded)
		}
		hitArg = &runtime.CallArgument{ObjectID: hit.Object.ObjectID}
	}
	var res struct {
		OK      bool          `json:"ok"`
		By      string        `json:"by"`
		Reached []reachedNode `json:"reached"`
	}
	p := runtime.CallFunctionOnParams{
		FunctionDeclaration: jsHits,
		ObjectID:            h.obj,
		Arguments:           []*runtime.CallArgument{hitArg},
		ReturnByValue:       new(true),
		Silent:              new(true),
	}
	r, err := call(ctx, s, h.ts, runtime.CallFunctionOn, p)
	if err != nil {
		if protocolErr(err) {
			return nil, stale("node %q: %v", n.Name, err)
		}
		return nil, err
	}
	if r.ExceptionDetails != nil || r.Result == nil || json.Unmarshal(r.Result.Value, &res) != nil {
		return nil, fmt.Errorf("click %q: hit test failed", n.Name)
	}
	if !res.OK {
		return nil, fmt.Errorf("click %q: another element (%s) covers it and would receive the click: %w", n.Name, res.By, surface.ErrNotLanded)
	}
	return reachedNodes(res.Reached), nil
}

// focus moves keyboard focus to the node without clicking it. Focus that
// does not arrive (the node is not focusable in effect, or a handler moved
// it elsewhere at once) wraps surface.ErrNotLanded.
func (s *Session) focus(ctx context.Context, n *domain.Node) error {
	if n != nil && (n.Ref == refDialogAccept || n.Ref == refDialogDismiss) {
		return fmt.Errorf("focus a dialog button: %w", surface.ErrUnsupported)
	}
	if s.dialogOpen() {
		return errDialogOpen
	}
	_, _, err := s.focusNode(ctx, n, nil)
	return err
}

// focusNode resolves the node, inspects it, lets check refuse it by what
// inspect found, moves focus to it and checks that focus stayed there. It
// returns the node's handle and what inspect found.
func (s *Session) focusNode(ctx context.Context, n *domain.Node, check func(nodeInfo) error) (*handle, nodeInfo, error) {
	h, err := s.resolve(ctx, n)
	if err != nil {
		return nil, nodeInfo{}, err
	}
	info, err := s.inspect(ctx, h, n)
	if err != nil {
		return nil, info, err
	}
	if check != nil {
		if err := check(info); err != nil {
			return nil, info, err
		}
	}
	if _, err := call(ctx, s, h.ts, dom.Focus, dom.FocusParams{BackendNodeID: h.backend}); err != nil {
		if protocolErr(err) {
			return nil, info, fmt.Errorf("focus %q: %v", n.Name, err)
		}
		return nil, info, err
	}
	if err := s.checkFocus(ctx, h, n); err != nil {
		return nil, info, err
	}
	return h, info, nil
}

// checkFocus returns an error wrapping surface.ErrNotLanded unless the node
// is still in its document and has focus.
func (s *Session) checkFocus(ctx context.Context, h *handle, n *domain.Node) error {
	var st struct {
		Connected bool `json:"connected"`
		Focused   bool `json:"focused"`
	}
	if err := s.callFn(ctx, h, jsFocused, &st); err != nil {
		return notLanded(fmt.Errorf("check focus of %q: %w", n.Name, err))
	}
	switch {
	case !st.Connected:
		return fmt.Errorf("node %q left the document during the action: %w", n.Name, surface.ErrNotLanded)
	case !st.Focused:
		return fmt.Errorf("focus did not stay on %q (another element took it): %w", n.Name, surface.ErrNotLanded)
	}
	return nil
}

// notLanded marks an error of a step that came after the action began: a
// node that went stale then was there when the action started, so it wraps
// surface.ErrNotLanded instead of surface.ErrStale.
func notLanded(err error) error {
	if err == nil || !errors.Is(err, surface.ErrStale) {
		return err
	}
	return fmt.Errorf("%w: %s", surface.ErrNotLanded, strings.TrimPrefix(err.Error(), surface.ErrStale.Error()+": "))
}

// centre scrolls the node into view and returns the centre of its first
// content quad in the coordinates its target takes input in (the page's
// viewport; an out-of-process frame's own viewport).
func (s *Session) centre(ctx context.Context, h *handle, n *domain.Node) (float64, float64, error) {
	if _, err := call(ctx, s, h.ts, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: h.backend}); err != nil && !protocolErr(err) {
		return 0, 0, err
	}
	res, err := call(ctx, s, h.ts, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: h.backend})
	if err != nil {
		if protocolErr(err) {
			return 0, 0, stale("node %q has no box: %v", n.Name, err)
		}
		return 0, 0, err
	}
	for _, q := range res.Quads {
		if len(q) < 8 {
			continue
		}
		area := 0.0
		for i := 0; i < 8; i += 2 {
			j := (i + 2) % 8
			area += q[i]*q[j+1] - q[j]*q[i+1]
		}
		if area/2 > 1 || area/2 < -1 {
			return (q[0] + q[2] + q[4] + q[6]) / 4, (q[1] + q[3] + q[5] + q[7]) / 4, nil
		}
	}
	return 0, 0, stale("node %q has no box", n.Name)
}

// mouseClick sends a left click at (x, y). A click that opens a JavaScript
// dialog has happened: the renderer's answer waits for the dialog.
func (s *Session) mouseClick(ctx context.Context, ts *tsession, x, y float64) error {
	steps := []struct {
		typ     input.DispatchMouseEventType
		buttons int64
	}{
		{input.DispatchMouseEventTypeMouseMoved, 0},
		{input.DispatchMouseEventTypeMousePressed, 1},
		{input.DispatchMouseEventTypeMouseReleased, 0},
	}
	for _, st := range steps {
		p := input.DispatchMouseEventParams{Type: st.typ, X: x, Y: y, Buttons: st.buttons}
		if st.typ != input.DispatchMouseEventTypeMouseMoved {
			p.Button = input.MouseButtonLeft
			p.ClickCount = 1
		}
		if _, err := call(ctx, s, ts, input.DispatchMouseEvent, p); err != nil {
			if errors.Is(err, errDialogOpen) {
				return nil
			}
			return err
		}
	}
	return nil
}

func (s *Session) typeText(ctx context.Context, n *domain.Node, text string, secret bool) error {
	if n != nil && (n.Ref == refDialogAccept || n.Ref == refDialogDismiss) {
		return fmt.Errorf("type into a dialog: %w", surface.ErrUnsupported)
	}
	if s.dialogOpen() {
		return errDialogOpen
	}
	// Nothing is typed unless the field has focus: a popup that took it
	// would otherwise receive the text (a password above all).
	h, info, err := s.focusNode(ctx, n, func(info nodeInfo) error {
		switch info.Kind {
		case "field", "editable":
			return nil
		case "readonly":
			return fmt.Errorf("node %q is read-only", n.Name)
		default:
			return fmt.Errorf("node %q is not a text field", n.Name)
		}
	})
	if err != nil {
		return err
	}
	if err := s.callFn(ctx, h, jsClear, nil, text == ""); err != nil {
		return notLanded(fmt.Errorf("clear %q: %w", n.Name, err))
	}
	if text != "" {
		if _, err := call(ctx, s, h.ts, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
			return err
		}
	}
	masked := secret || info.Password
	var got struct {
		Value     string `json:"value"`
		Len       int    `json:"len"`
		Connected bool   `json:"connected"`
	}
	if err := s.callFn(ctx, h, jsRead, &got, masked); err != nil {
		return notLanded(fmt.Errorf("read back %q: %w", n.Name, err))
	}
	if !got.Connected {
		return fmt.Errorf("typed value did not land: node %q left the document: %w", n.Name, surface.ErrNotLanded)
	}
	// The message gives lengths only: the field's content may be a secret
	// or personal data, and errors reach logs and records.
	want := len(utf16.Encode([]rune(text)))
	if masked {
		if got.Len != want {
			return fmt.Errorf("typed value did not land in %q: it holds %d characters, want %d: %w", n.Name, got.Len, want, surface.ErrNotLanded)
		}
		return nil
	}
	if got.Value != text {
		what := "different characters"
		if got.Len != want {
			what = fmt.Sprintf("%d characters", got.Len)
		}
		return fmt.Errorf("typed value did not land in %q: it holds %s, want %d characters: %w", n.Name, what, want, surface.ErrNotLanded)
	}
	return nil
}

func (s *Session) selectOption(ctx context.Context, n *domain.Node, label string) error {
	if s.dialogOpen() {
		return errDialogOpen
	}
	h, err := s.resolve(ctx, n)
	if err != nil {
		return err
	}
	if _, err := s.inspect(ctx, h, n); err != nil {
		return err
	}
	return s.choose(ctx, h, n, label)
}

// choose selects the option labelled label of the <select> h is (or is an
// option of), firing input and change.
func (s *Session) choose(ctx context.Context, h *handle, n *domain.Node, label string) error {
	var res struct {
		Err    string   `json:"err"`
		Labels []string `json:"labels"`
		Value  string   `json:"value"`
	}
	if err := s.callFn(ctx, h, jsSelect, &res, label); err != nil {
		return err
	}
	switch res.Err {
	case "":
		return nil
	case "missing":
		return fmt.Errorf("%q has no option labelled %q (options: %s)", n.Name, label, strings.Join(res.Labels, ", "))
	default:
		return fmt.Errorf("select %q in %q: %s", label, n.Name, res.Err)
	}
}

func (s *Session) pressKey(ctx context.Context, n *domain.Node, key string, allow admitFunc) error {
	k, ok := lookupKey(key)
	if !ok {
		return fmt.Errorf("unknown key %q: %w", key, surface.ErrUnsupported)
	}
	if s.dialogOpen() {
		switch k.key {
		case "Enter":
			return s.answerDialog(ctx, true)
		case "Escape":
			return s.answerDialog(ctx, false)
		}
		return errDialogOpen
	}
	ts := s.page
	var h *handle
	if n != nil && n.Ref != "" {
		// The key goes to whatever has focus: not to a popup that took it.
		var err error
		if h, _, err = s.focusNode(ctx, n, nil); err != nil {
			return err
		}
		ts = h.ts
	}
	reached, err := s.keyReach(ctx, h, k.key)
	if err != nil {
		return fmt.Errorf("key %s: %w", key, err)
	}
	if err := admit(allow, reached); err != nil {
		return fmt.Errorf("key %s: %w", key, err)
	}
	down := input.DispatchKeyEventParams{
		Type: input.DispatchKeyEventTypeRawKeyDown, Key: k.key, Code: k.code,
		WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk, Modifiers: k.modifiers,
	}
	if k.text != "" {
		down.Type = input.DispatchKeyEventTypeKeyDown
		down.Text, down.UnmodifiedText = k.text, k.text
	}
	up := input.DispatchKeyEventParams{
		Type: input.DispatchKeyEventTypeKeyUp, Key: k.key, Code: k.code,
		WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk, Modifiers: k.modifiers,
	}
	for _, p := range []input.DispatchKeyEventParams{down, up} {
		if _, err := call(ctx, s, ts, input.DispatchKeyEvent, p); err != nil {
			if errors.Is(err, errDialogOpen) {
				return nil // the key opened a dialog
			}
			return err
		}
	}
	return nil
}

// keyReach returns the controls a key reaches (jsKeyReach), read from the
// focused node h, or from the top document when the key has no target.
func (s *Session) keyReach(ctx context.Context, h *handle, key string) ([]domain.Node, error) {
	if key != "Enter" && key != " " {
		return nil, nil
	}
	p := runtime.CallFunctionOnParams{
		FunctionDeclaration: jsKeyReach,
		Arguments:           []*runtime.CallArgument{{Value: []byte(strconv.Quote(key))}},
		ReturnByValue:       new(true),
		Silent:              new(true),
	}
	ts := s.page
	if h != nil {
		ts, p.ObjectID = h.ts, h.obj
	} else {
		s.tr.mu.Lock()
		wk, ok := s.tr.frameCtx[s.tr.topFrame]
		s.tr.mu.Unlock()
		if !ok || wk.ts != s.page {
			// No isolated world yet: read the top document from the main world.
			doc, err := call(ctx, s, s.page, runtime.Evaluate, runtime.EvaluateParams{Expression: "document", ObjectGroup: s.objs.name, Silent: new(true)})
			if err != nil {
				return nil, err
			}
			if doc.Result == nil || doc.Result.ObjectID == "" {
				return nil, errors.New("the page has no document")
			}
			s.objs.on(s.page)
			p.ObjectID = doc.Result.ObjectID
		} else {
			p.ExecutionContextID = wk.id
		}
	}
	r, err := call(ctx, s, ts, runtime.CallFunctionOn, p)
	if err != nil {
		return nil, err
	}
	var res struct {
		Reached []reachedNode `json:"reached"`
	}
	if r.ExceptionDetails != nil || r.Result == nil || json.Unmarshal(r.Result.Value, &res) != nil {
		return nil, errors.New("could not read what the key reaches")
	}
	return reachedNodes(res.Reached), nil
}

func (s *Session) navigate(ctx context.Context, url string) error {
	if s.dialogOpen() {
		return errDialogOpen
	}
	res, err := call(ctx, s, s.page, page.Navigate, page.NavigateParams{URL: url})
	if err != nil {
		if errors.Is(err, errDialogOpen) {
			return nil // a beforeunload dialog asks first
		}
		return err
	}
	// An error status with an empty body is still a document whose status
	// the snapshot reports; other failures are errors.
	if res.ErrorText != "" && res.ErrorText != "net::ERR_HTTP_RESPONSE_CODE_FAILURE" {
		return fmt.Errorf("navigate to %s: %s", url, res.ErrorText)
	}
	return nil
}

func (s *Session) reload(ctx context.Context) error {
	if s.dialogOpen() {
		return errDialogOpen
	}
	if _, err := call(ctx, s, s.page, page.Reload, page.ReloadParams{}); err != nil && !errors.Is(err, errDialogOpen) {
		return err
	}
	return nil
}

// rawClick clicks at page coordinates (the top document's, as Node.Bounds).
func (s *Session) rawClick(ctx context.Context, x, y float64, ok admitFunc) error {
	if s.dialogOpen() {
		return errDialogOpen
	}
	m, err := call(ctx, s, s.page, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return err
	}
	vx, vy := x, y
	if vv := m.CSSVisualViewport; vv != nil {
		vx, vy = x-vv.PageX, y-vv.PageY
		if vx < 0 || vy < 0 || vx >= vv.ClientWidth || vy >= vv.ClientHeight {
			return fmt.Errorf("point (%g, %g) is outside the viewport", x, y)
		}
	}
	reached, err := s.pointReach(ctx, vx, vy)
	if err != nil {
		return fmt.Errorf("point (%g, %g): %w", x, y, err)
	}
	if err := admit(ok, reached); err != nil {
		return fmt.Errorf("point (%g, %g): %w", x, y, err)
	}
	return s.mouseClick(ctx, s.page, vx, vy)
}

// pointReach returns the controls a pointer input at the viewport point
// (vx, vy) of the page reaches: the element there, its actionable
// ancestors and the control a label among them forwards to (jsHits). A
// point on nothing, or inside an out-of-process frame (its owner <iframe>
// is what the page sees there), reaches nothing it can name.
func (s *Session) pointReach(ctx context.Context, vx, vy float64) ([]domain.Node, error) {
	loc, err := call(ctx, s, s.page, dom.GetNodeForLocation, dom.GetNodeForLocationParams{
		X: int64(math.Round(vx)), Y: int64(math.Round(vy)), IncludeUserAgentShadowDOM: new(true),
	})
	if err != nil {
		if protocolErr(err) {
			return nil, nil
		}
		return nil, err
	}
	p := dom.ResolveNodeParams{BackendNodeID: loc.BackendNodeID, ObjectGroup: s.objs.name}
	s.tr.mu.Lock()
	if wk, ok := s.tr.frameCtx[loc.FrameID]; ok && wk.ts == s.page {
		p.ExecutionContextID = wk.id
	}
	s.tr.mu.Unlock()
	s.objs.on(s.page)
	hit, err := call(ctx, s, s.page, dom.ResolveNode, p)
	if err != nil && p.ExecutionContextID != 0 && protocolErr(err) {
		p.ExecutionContextID = 0
		hit, err = call(ctx, s, s.page, dom.ResolveNode, p)
	}
	if err != nil {
		if protocolErr(err) {
			return nil, nil
		}
		return nil, err
	}
	if hit.Object == nil || hit.Object.ObjectID == "" {
		return nil, nil
	}
	var res struct {
		Reached []reachedNode `json:"reached"`
	}
	r, err := call(ctx, s, s.page, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: jsHits,
		ObjectID:            hit.Object.ObjectID,
		Arguments:           []*runtime.CallArgument{{Value: []byte("null")}, {Value: []byte("true")}},
		ReturnByValue:       new(true),
		Silent:              new(true),
	})
	if err != nil {
		return nil, err
	}
	if r.ExceptionDetails != nil || r.Result == nil || json.Unmarshal(r.Result.Value, &res) != nil {
		return nil, errors.New("could not read what the point reaches")
	}
	return reachedNodes(res.Reached), nil
}

// answerDialog accepts or dismisses the open JavaScript dialog and waits,
// bounded, until the page reports it closed.
func (s *Session) answerDialog(ctx context.Context, accept bool) error {
	s.tr.mu.Lock()
	d := s.tr.dialog
	s.tr.mu.Unlock()
	if d == nil {
		return stale("no JavaScript dialog is open")
	}
	if _, err := call(ctx, s, d.ts, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept}, ignoreDialog); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	for {
		s.tr.mu.Lock()
		open := s.tr.dialog == d
		ch := s.tr.notify
		s.tr.mu.Unlock()
		if !open {
			return nil
		}
		select {
		case <-ch:
		case <-wctx.Done():
			return nil
		case <-s.alive.Done():
			return s.usable()
		}
	}
}
