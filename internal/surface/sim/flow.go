package sim

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

// Node declares one element of a [Screen].
type Node struct {
	// Role is the role as the snapshot shows it ("button", "textbox",
	// "cell", "heading", "text", "alertdialog", ...).
	Role string
	Name string
	// Value is the initial value of an input (textbox, combobox, ...).
	Value string
	// Frame puts the node in a child frame of that name ("" for the top
	// document). Frames are created in order of first use.
	Frame string
	// Row puts the node in a table row whose first cell reads Row, so a
	// row_of anchor on Row finds it. Nodes with the same Frame and Row
	// share a row.
	Row string
	// Options lists the labels a select accepts; empty accepts any.
	Options []string
	// Disabled nodes refuse every action.
	Disabled bool
	// Password fields render their value as bullets.
	Password bool
}

// Screen is one page of a [Flow].
type Screen struct {
	// Name identifies the screen; it is also the last element of its URL.
	Name string
	// Title is the document title (default: Name).
	Title string
	// URL overrides the screen's URL (for example a page on another host).
	URL string
	// Status is the document's HTTP status (0 means 200).
	Status int
	// Dialog, when set, is a JavaScript dialog that opens whenever the
	// screen loads.
	Dialog *domain.Dialog
	Nodes  []Node
}

// Effect is what a handler does when its control is acted on, or when its
// screen loads. Effects of one handler run in order; the first error stops
// them and is the action's error.
type Effect func(ev *Event) error

// Event is the context an [Effect] runs in.
type Event struct {
	// Type is the action (click or press_key), "load" for OnLoad effects
	// and "push" for [Flow.Push].
	Type domain.ActionType
	// Key is the key of a press_key.
	Key string
	// N counts how often this handler has run, this time included (1 the
	// first time).
	N    int
	flow *Flow
}

// Value returns the current value of the input (role, name) on the current
// screen (a password's real value), or "".
func (e *Event) Value(role, name string) string {
	if k := e.flow.cur.find(role, name); k >= 0 {
		return e.flow.cur.values[k]
	}
	return ""
}

// Goto loads another screen (running its OnLoad effects).
func (e *Event) Goto(screen string) error { return e.flow.goTo(screen) }

// Submit loads screen as the answer to a form POST (a 200 that renders the
// result directly, no redirect): its snapshots are PostBacked, so the
// surface refuses a reload there with surface.ErrResubmit, as a browser
// would re-send the form. A later load (Goto, navigate, a link) is a GET
// and not PostBacked; Goto models POST→303→GET.
func (e *Event) Submit(screen string) error { return e.flow.submit(screen) }

// Set sets the value of the input (role, name) on the current screen.
func (e *Event) Set(role, name, value string) error {
	k := e.flow.cur.find(role, name)
	if k < 0 {
		return fmt.Errorf("sim flow: no %s %q on screen %q", role, name, e.flow.cur.screen.Name)
	}
	e.flow.cur.values[k] = value
	return nil
}

// Append adds an entry to the flow's ledger (the app's durable effects:
// postings, transfers).
func (e *Event) Append(entry string) { e.flow.ledger = append(e.flow.ledger, entry) }

// Fault makes the current page load fail with an HTTP status: the screen
// shows an error page at its own URL until it is reloaded or left.
func (e *Event) Fault(status int) { e.flow.cur.fault = status }

// OpenDialog opens a JavaScript dialog on the current page.
func (e *Event) OpenDialog(typ, message string) {
	e.flow.cur.dialog = &domain.Dialog{Type: typ, Message: message}
}

// Goto returns an effect that loads screen.
func Goto(screen string) Effect { return func(ev *Event) error { return ev.Goto(screen) } }

// Submit returns an effect that calls [Event.Submit].
func Submit(screen string) Effect { return func(ev *Event) error { return ev.Submit(screen) } }

// Set returns an effect that sets the value of (role, name).
func Set(role, name, value string) Effect {
	return func(ev *Event) error { return ev.Set(role, name, value) }
}

// Append returns an effect that adds entry to the ledger.
func Append(entry string) Effect {
	return func(ev *Event) error { ev.Append(entry); return nil }
}

// Fault returns an effect that makes the current page fail with status.
func Fault(status int) Effect {
	return func(ev *Event) error { ev.Fault(status); return nil }
}

// OpenDialog returns an effect that opens a JavaScript dialog.
func OpenDialog(typ, message string) Effect {
	return func(ev *Event) error { ev.OpenDialog(typ, message); return nil }
}

// Fail returns an effect that fails the action with message.
func Fail(message string) Effect {
	return func(*Event) error { return errors.New(message) }
}

// Nth returns an effect that runs effs only the n-th time its handler runs.
func Nth(n int, effs ...Effect) Effect {
	return func(ev *Event) error {
		if ev.N != n {
			return nil
		}
		return run(ev, effs)
	}
}

// From returns an effect that runs effs from the n-th time its handler runs
// on.
func From(n int, effs ...Effect) Effect {
	return func(ev *Event) error {
		if ev.N < n {
			return nil
		}
		return run(ev, effs)
	}
}

func run(ev *Event, effs []Effect) error {
	for _, eff := range effs {
		if err := eff(ev); err != nil {
			return err
		}
	}
	return nil
}

// Handled is one action the app received.
type Handled struct {
	Screen string
	Type   domain.ActionType
	Role   string
	Name   string
	// Text is the typed or selected text as the app received it (a secret
	// in clear: the app is the one place it may be).
	Text string
	Key  string
	URL  string
}

// Flow is a declarative [App] for engine tests. Navigating to the base URL
// (with or without a trailing slash) loads the first screen; any screen
// loads at [Flow.URL]. Typing and selecting set an input's value; clicking
// or pressing a key on a node runs the handlers registered with [Flow.On]
// for its (role, name); focus moves the key target to a node and renders it
// Focused (typing and clicking move the key target without showing it);
// a screen loaded by the [Submit] effect is POST-backed and a reload there
// is refused (surface.ErrResubmit); reloading loads the current screen afresh (values
// reset, faults and dialogs cleared, OnLoad effects run again). Clicking
// OK or Cancel in a dialog closes it, then runs the handlers of that button.
// While a dialog is open every other action fails. A URL that names no
// screen shows a 404 page.
//
// Build a Flow before handing it to a [Surface]; its accessors (Ledger,
// Handled, Count, Screen) are safe to call while a run is in progress.
type Flow struct {
	mu      sync.Mutex
	base    string
	screens []Screen
	on      map[[2]string][]Effect
	fired   map[[2]string]int
	onLoad  map[string][]Effect
	loads   map[string]int
	cur     *page
	gen     int
	depth   int
	ledger  []string
	handled []Handled
}

var _ App = (*Flow)(nil)

// page is one load of a screen.
type page struct {
	screen *Screen
	url    string
	values []string
	focus  int // declared index of the last node typed into, clicked or focused, -1 for none
	shown  int // declared index a focus action focused, rendered Focused; -1 for none
	fault  int
	dialog *domain.Dialog
	posted bool // the page is the answer to a form POST
}

func (p *page) find(role, name string) int {
	for k, n := range p.screen.Nodes {
		if n.Role == role && n.Name == name {
			return k
		}
	}
	return -1
}

// NewFlow returns a flow over screens, served under base (an http(s) URL
// without a trailing slash, e.g. "http://127.0.0.1/app"). It shows
// about:blank until the first navigation. It panics on a screen without a
// name or two screens with one name: flows are test fixtures.
func NewFlow(base string, screens ...Screen) *Flow {
	f := &Flow{
		base: strings.TrimRight(base, "/"), screens: slices.Clone(screens),
		on: map[[2]string][]Effect{}, fired: map[[2]string]int{},
		onLoad: map[string][]Effect{}, loads: map[string]int{},
	}
	seen := map[string]bool{}
	for _, s := range screens {
		if s.Name == "" || seen[s.Name] {
			panic(fmt.Sprintf("sim flow: screen name %q is empty or repeated", s.Name))
		}
		seen[s.Name] = true
	}
	f.cur = &page{screen: &Screen{Name: "about:blank"}, url: "about:blank", focus: -1, shown: -1}
	return f
}

// On registers effects for a click or key press on the node (role, name),
// on whatever screen it appears. It returns f for chaining.
func (f *Flow) On(role, name string, effs ...Effect) *Flow {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := [2]string{role, name}
	f.on[k] = append(f.on[k], effs...)
	return f
}

// OnLoad registers effects that run each time screen loads (by navigation,
// reload or Goto); Event.N counts the loads. It returns f for chaining.
func (f *Flow) OnLoad(screen string, effs ...Effect) *Flow {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onLoad[screen] = append(f.onLoad[screen], effs...)
	return f
}

// Push applies effects from outside any action, as the app changing on its
// own (a timer, a server push); Event.Type is "push" and Event.N is 1. Call
// [Surface.Changed] afterwards so that waiters see the change.
func (f *Flow) Push(effs ...Effect) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return run(&Event{Type: "push", N: 1, flow: f}, effs)
}

// URL returns the URL of a screen.
func (f *Flow) URL(screen string) string {
	for _, s := range f.screens {
		if s.Name == screen && s.URL != "" {
			return s.URL
		}
	}
	return f.base + "/" + screen
}

// Screen returns the name of the current screen ("about:blank" before the
// first navigation, "404" on an unknown URL).
func (f *Flow) Screen() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur.screen.Name
}

// Ledger returns a copy of the ledger.
func (f *Flow) Ledger() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ledger)
}

// Handled returns a copy of every action the app received, in order.
func (f *Flow) Handled() []Handled {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.handled)
}

// Count returns how many actions of any type the node (role, name)
// received.
func (f *Flow) Count(role, name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, h := range f.handled {
		if h.Role == role && h.Name == name {
			n++
		}
	}
	return n
}

// maxLoadDepth bounds OnLoad effects that load other screens.
const maxLoadDepth = 8

// load shows a fresh page of s at url and runs its OnLoad effects.
func (f *Flow) load(s *Screen, url string) error {
	f.gen++
	p := &page{screen: s, url: url, values: make([]string, len(s.Nodes)), focus: -1, shown: -1}
	for k, n := range s.Nodes {
		p.values[k] = n.Value
	}
	if s.Dialog != nil {
		d := *s.Dialog
		p.dialog = &d
	}
	f.cur = p
	f.loads[s.Name]++
	effs := f.onLoad[s.Name]
	if len(effs) == 0 {
		return nil
	}
	if f.depth >= maxLoadDepth {
		return fmt.Errorf("sim flow: screen loads nest deeper than %d", maxLoadDepth)
	}
	f.depth++
	defer func() { f.depth-- }()
	return run(&Event{Type: "load", N: f.loads[s.Name], flow: f}, effs)
}

func (f *Flow) screen(name string) *Screen {
	for i := range f.screens {
		if f.screens[i].Name == name {
			return &f.screens[i]
		}
	}
	return nil
}

// submit loads screen name as the answer to a form POST: its snapshots are
// PostBacked until the next load.
func (f *Flow) submit(name string) error {
	if err := f.goTo(name); err != nil {
		return err
	}
	f.cur.posted = true
	return nil
}

func (f *Flow) goTo(name string) error {
	s := f.screen(name)
	if s == nil {
		return fmt.Errorf("sim flow: no screen %q", name)
	}
	return f.load(s, f.URL(name))
}

var notFound = &Screen{Name: "404", Title: "Not Found", Status: 404, Nodes: []Node{{Role: "heading", Name: "Not Found"}}}

func (f *Flow) navigate(url string) error {
	if len(f.screens) > 0 && (url == f.base || url == f.base+"/") {
		return f.goTo(f.screens[0].Name)
	}
	for i := range f.screens {
		if f.URL(f.screens[i].Name) == url {
			return f.load(&f.screens[i], url)
		}
	}
	if url == "about:blank" {
		return f.load(&Screen{Name: "about:blank"}, url)
	}
	return f.load(notFound, url)
}

// Handle performs one action.
func (f *Flow) Handle(a policy.AuthorizedAction) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	gen := f.gen
	h := Handled{Screen: f.cur.screen.Name, Type: a.Type(), Text: a.Text(), Key: a.Key(), URL: a.URL()}
	switch a.Type() {
	case domain.ActNavigate:
		f.handled = append(f.handled, h)
		return true, f.navigate(a.URL())
	case domain.ActReload:
		f.handled = append(f.handled, h)
		return true, f.load(f.cur.screen, f.cur.url)
	case domain.ActRawInput:
		return false, fmt.Errorf("sim flow: raw_input: %w", surface.ErrUnsupported)
	}
	id := ""
	if n := a.Node(); n != nil {
		h.Role, h.Name = n.Role, n.Name
		_, id, _ = strings.Cut(n.Ref, "/")
	} else if a.Type() == domain.ActPressKey && f.cur.focus >= 0 && f.cur.fault == 0 {
		id = "n" + strconv.Itoa(f.cur.focus)
	} else {
		return false, fmt.Errorf("sim flow: %s with no target and no focused node: %w", a.Type(), surface.ErrUnsupported)
	}
	inDialog := strings.HasPrefix(id, "dialog:")
	if f.cur.dialog != nil && !inDialog {
		return false, fmt.Errorf("sim flow: a dialog (%q) is open: answer it first", f.cur.dialog.Message)
	}
	k := -1
	if !inDialog {
		var err error
		if k, err = strconv.Atoi(strings.TrimPrefix(id, "n")); err != nil || k < 0 || k >= len(f.cur.values) {
			return false, fmt.Errorf("sim flow: ref %q names no declared node: %w", id, surface.ErrStale)
		}
		h.Role, h.Name = f.cur.screen.Nodes[k].Role, f.cur.screen.Nodes[k].Name
	}
	f.handled = append(f.handled, h)
	switch a.Type() {
	case domain.ActType, domain.ActSelect:
		if k < 0 {
			return false, fmt.Errorf("sim flow: cannot %s into a dialog button", a.Type())
		}
		decl := f.cur.screen.Nodes[k]
		if a.Type() == domain.ActSelect && len(decl.Options) > 0 && !slices.Contains(decl.Options, a.Text()) {
			return false, fmt.Errorf("sim flow: %s %q has no option %q", decl.Role, decl.Name, a.Text())
		}
		f.cur.values[k], f.cur.focus, f.cur.shown = a.Text(), k, -1
		return false, nil
	case domain.ActFocus:
		if k < 0 {
			return false, fmt.Errorf("sim flow: cannot focus a dialog button: %w", surface.ErrUnsupported)
		}
		f.cur.focus, f.cur.shown = k, k
		return false, nil
	case domain.ActClick, domain.ActPressKey:
		if inDialog && a.Type() == domain.ActClick {
			f.cur.dialog = nil
		}
		if k >= 0 {
			f.cur.focus, f.cur.shown = k, -1
		}
		key := [2]string{h.Role, h.Name}
		if effs := f.on[key]; len(effs) > 0 {
			f.fired[key]++
			if err := run(&Event{Type: a.Type(), Key: a.Key(), N: f.fired[key], flow: f}, effs); err != nil {
				return f.gen != gen, err
			}
		}
		return f.gen != gen, nil
	}
	return false, fmt.Errorf("sim flow: %s: %w", a.Type(), surface.ErrUnsupported)
}

// Render draws the current page: a document (named by the title) holding
// the screen's nodes in order, one child frame per distinct Node.Frame (an
// Iframe node in the top document and a document root of its own), one
// table per frame for the rows of nodes with a Row label, and the dialog
// when one is open. A faulted page renders as an error page instead.
func (f *Flow) Render() *domain.UiSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.cur
	s := p.screen
	prefix := "g" + strconv.Itoa(f.gen)
	if p.fault != 0 {
		msg := fmt.Sprintf("%d error", p.fault)
		t := newTree(p.url, msg, prefix)
		doc := t.document("", p.url, msg, p.fault)
		t.add(doc, domain.Node{Role: "heading", Name: msg})
		t.text(doc, "The server answered "+strconv.Itoa(p.fault)+".")
		t.snap.HTTPStatus = p.fault
		return t.snap
	}
	title := s.Title
	if title == "" {
		title = s.Name
	}
	t := newTree(p.url, title, prefix)
	t.snap.HTTPStatus = s.Status
	t.snap.PostBacked = p.posted
	roots := map[string]int{"": t.document("", p.url, title, s.Status)}
	tables := map[string]int{}
	rows := map[[2]string]int{}
	for _, n := range s.Nodes {
		if _, ok := roots[n.Frame]; !ok {
			t.add(roots[""], domain.Node{Role: domain.RoleIframe, Name: n.Frame, Ref: "iframe:" + n.Frame})
			roots[n.Frame] = t.document(n.Frame, f.base+"/"+s.Name+"/frame/"+n.Frame, n.Frame, 200)
		}
	}
	for k, n := range s.Nodes {
		parent := roots[n.Frame]
		if n.Row != "" {
			rk := [2]string{n.Frame, n.Row}
			r, ok := rows[rk]
			if !ok {
				tb, ok := tables[n.Frame]
				if !ok {
					tb = t.add(parent, domain.Node{Role: "table"})
					tables[n.Frame] = tb
				}
				r = t.add(tb, domain.Node{Role: "row"})
				t.add(r, domain.Node{Role: "cell", Name: n.Row})
				rows[rk] = r
			}
			parent = r
		}
		value := p.values[k]
		if n.Password && value != "" {
			value = strings.Repeat("•", len([]rune(value)))
		}
		states := domain.NodeStates{Disabled: n.Disabled, Password: n.Password, Focused: k == p.shown}
		switch n.Role {
		case "textbox", "searchbox", "combobox", "spinbutton":
			states.Focusable, states.Editable = true, n.Role != "combobox"
		case "button", "link", "checkbox", "radio", "menuitem", "tab":
			states.Focusable = true
		}
		t.add(parent, domain.Node{Role: n.Role, Name: n.Name, Value: value, Frame: n.Frame,
			Ref: "n" + strconv.Itoa(k), States: states, Sensitive: n.Password})
	}
	if p.dialog != nil {
		t.dialog(*p.dialog)
	}
	return t.snap
}
