// Package statetest serves the conformance fixture app that
// internal/surface/surfacetest describes (pages "main", "second" and
// "frames") over the state automation contract of internal/surface/state,
// so that the state adapter runs the same conformance suite as the browser
// and sim adapters. It is also a small reference implementation of a
// contract server: long-polled state, act answers, stale ids, a dialog.
//
// The app starts on about:blank (no controls). Its pages are
// {base}/main, {base}/second and {base}/frames; navigating anywhere else
// shows a "Not Found" page with http_status 404. Control ids carry the
// page-load generation ("g3.greet"), so an id of a replaced page is
// answered 404 (stale). The confirm dialog of "main" is a control of role
// "alertdialog" named "Proceed?" with the child buttons "OK" and "Cancel"
// (described by the message), and the state's "dialog" field reports
// {"type": "confirm", "message": "Proceed?"}. The frames page puts its
// controls in frames "nav" and "content". app_state carries
// {"page", "name", "color", "status", "dialog", "loads"}. Its wire types
// are internal/statewire's; otherwise it uses the standard library only.
package statetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/statewire"
)

// Contract paths.
const (
	StatePath = statewire.StatePath
	ActPath   = statewire.ActPath
)

// maxWait bounds one long poll.
const maxWait = 30 * time.Second

// Pages of the fixture.
const (
	PageMain   = "main"
	PageSecond = "second"
	PageFrames = "frames"
)

var colors = []string{"Red", "Green", "Blue"}

// Fixture is the fixture app behind the contract: an http.Handler serving
// StatePath and ActPath. It is safe for concurrent use.
type Fixture struct {
	base string

	mu      sync.Mutex
	seq     uint64
	changed chan struct{} // closed and replaced on every change

	page   string // a Page*, "404" or "" (about:blank)
	url    string
	gen    int
	name   string
	color  string
	status string
	opened map[string]bool
	focus  string // control name (without the generation)
	dialog bool
}

var _ http.Handler = (*Fixture)(nil)

// NewFixture returns the app for pages under base (no trailing slash),
// showing about:blank.
func NewFixture(base string) *Fixture {
	return &Fixture{base: strings.TrimRight(base, "/"), url: "about:blank", color: colors[0],
		opened: map[string]bool{}, changed: make(chan struct{}), seq: 1}
}

// URL returns the URL of a fixture page.
func (f *Fixture) URL(page string) string { return f.base + "/" + page }

// FixtureServer is a Fixture on an httptest server on 127.0.0.1.
type FixtureServer struct {
	*httptest.Server
	Fixture *Fixture
}

// NewFixtureServer starts a fixture app; Close it when done.
func NewFixtureServer() *FixtureServer {
	srv := httptest.NewUnstartedServer(nil)
	f := NewFixture("http://" + srv.Listener.Addr().String())
	srv.Config.Handler = f
	srv.Start()
	return &FixtureServer{Server: srv, Fixture: f}
}

// PageURL returns the URL of a fixture page (a surfacetest.Harness URL).
// It returns "" for the optional pages "form" and "sent": the automation
// contract has no POST-backed documents, so the suite skips those checks.
func (s *FixtureServer) PageURL(page string) string {
	if page == "form" || page == "sent" {
		return ""
	}
	return s.Fixture.URL(page)
}

// actError is a refused act.
type actError struct {
	status int
	code   string
	msg    string
}

func (e *actError) Error() string { return e.msg }

func refuse(status int, code, format string, args ...any) error {
	return &actError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP serves the contract.
func (f *Fixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == StatePath && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		f.serveState(w, r)
	case r.URL.Path == ActPath && r.Method == http.MethodPost:
		f.serveAct(w, r)
	case r.URL.Path == StatePath || r.URL.Path == ActPath:
		writeJSON(w, http.StatusMethodNotAllowed, statewire.ErrorResponse{Error: "method not allowed"})
	default:
		writeJSON(w, http.StatusNotFound, statewire.ErrorResponse{Error: "not found"})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serveState answers the state, after holding the request while
// ?after=SEQ&wait_ms=MS asks for a change that has not happened.
func (f *Fixture) serveState(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if a := q.Get("after"); a != "" {
		after, err := strconv.ParseUint(a, 10, 64)
		wait, werr := strconv.Atoi(q.Get("wait_ms"))
		if err != nil || werr != nil || wait < 0 {
			writeJSON(w, http.StatusBadRequest, statewire.ErrorResponse{Error: "after and wait_ms must be non-negative integers", Code: "invalid"})
			return
		}
		f.waitChange(r, after, min(time.Duration(wait)*time.Millisecond, maxWait))
	}
	f.mu.Lock()
	body := f.render()
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

func (f *Fixture) waitChange(r *http.Request, after uint64, wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		f.mu.Lock()
		seq, ch := f.seq, f.changed
		f.mu.Unlock()
		if seq != after {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// bump records a change and wakes every waiter. f.mu must be held.
func (f *Fixture) bump() {
	f.seq++
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Fixture) serveAct(w http.ResponseWriter, r *http.Request) {
	var req statewire.ActRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, statewire.ErrorResponse{Error: "body: " + err.Error(), Code: "invalid"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	nav, err := f.act(req)
	if err != nil {
		var ae *actError
		if !errors.As(err, &ae) {
			ae = &actError{status: http.StatusInternalServerError, msg: err.Error()}
		}
		writeJSON(w, ae.status, statewire.ErrorResponse{Error: ae.msg, Code: ae.code})
		return
	}
	f.bump()
	writeJSON(w, http.StatusOK, statewire.ActResponse{Navigated: nav, URL: f.url, Seq: f.seq})
}

// load shows url afresh.
func (f *Fixture) load(url string) {
	f.gen++
	f.url = url
	f.page = "404"
	if p, ok := strings.CutPrefix(url, f.base+"/"); ok && (p == PageMain || p == PageSecond || p == PageFrames) {
		f.page = p
	}
	if url == "about:blank" {
		f.page = ""
	}
	f.name, f.color, f.status, f.focus, f.dialog = "", colors[0], "", "", false
	f.opened = map[string]bool{}
}

// id qualifies a control name with the page-load generation.
func (f *Fixture) id(name string) string { return "g" + strconv.Itoa(f.gen) + "." + name }

// act performs one action and reports whether it navigated.
func (f *Fixture) act(req statewire.ActRequest) (bool, error) {
	switch req.Action {
	case "navigate":
		if req.URL == "" {
			return false, refuse(http.StatusBadRequest, "invalid", "navigate needs a url")
		}
		f.load(req.URL)
		return true, nil
	case "reload":
		f.load(f.url)
		return true, nil
	case "click", "type", "select", "press_key":
	default:
		return false, refuse(http.StatusNotImplemented, "unsupported", "action %q is not supported", req.Action)
	}
	target := req.Control
	if target == "" {
		if req.Action != "press_key" {
			return false, refuse(http.StatusBadRequest, "invalid", "%s needs a control", req.Action)
		}
		target = f.id(f.focus)
	}
	var c *statewire.Control
	for _, cur := range f.render().Controls {
		if cur.ID == target {
			c = &cur
			break
		}
	}
	if c == nil {
		if req.Action == "press_key" && req.Control == "" {
			return false, nil // no focused control: the key does nothing
		}
		return false, refuse(http.StatusNotFound, "stale", "no control %q on the current page", target)
	}
	name := strings.TrimPrefix(c.ID, f.id(""))
	if f.dialog && c.Parent != f.id("dialog") {
		return false, refuse(http.StatusConflict, "dialog_open", "a dialog is open: answer it first")
	}
	if c.Disabled {
		return false, refuse(http.StatusUnprocessableEntity, "disabled", "%s %q is disabled", c.Role, c.Name)
	}
	switch req.Action {
	case "click":
		return f.click(name), nil
	case "type":
		if name != "name" {
			return false, refuse(http.StatusUnprocessableEntity, "invalid", "%s %q is not editable", c.Role, c.Name)
		}
		f.name, f.focus = req.Text, name
	case "select":
		if name != "color" {
			return false, refuse(http.StatusUnprocessableEntity, "invalid", "%s %q is not a select", c.Role, c.Name)
		}
		if !slices.Contains(colors, req.Text) {
			return false, refuse(http.StatusUnprocessableEntity, "invalid", "Color has no option %q", req.Text)
		}
		f.color, f.focus = req.Text, name
	case "press_key":
		if req.Key == "Enter" && name == "name" {
			f.greet()
		}
	}
	return false, nil
}

func (f *Fixture) greet() { f.status = "Hello, " + f.name + " (" + f.color + ")" }

func (f *Fixture) click(name string) bool {
	switch name {
	case "greet":
		f.greet()
	case "ask":
		f.dialog = true
	case "dialog.ok":
		f.dialog, f.status = false, "Confirmed"
	case "dialog.cancel":
		f.dialog, f.status = false, "Cancelled"
	case "next":
		f.load(f.URL(PageSecond))
		return true
	case "back":
		f.load(f.URL(PageMain))
		return true
	case "open.nav", "open.content":
		f.opened[strings.TrimPrefix(name, "open.")] = true
	}
	f.focus = name
	return false
}

// render returns the current state. f.mu must be held.
func (f *Fixture) render() statewire.State {
	b := statewire.State{URL: f.url, Seq: f.seq, Controls: []statewire.Control{}, AppState: statewire.MustAppState(map[string]any{
		"page": f.page, "name": f.name, "color": f.color, "status": f.status,
		"dialog": f.dialog, "loads": f.gen,
	})}
	add := func(c statewire.Control) {
		c.ID = f.id(c.ID)
		if c.Parent != "" {
			c.Parent = f.id(c.Parent)
		}
		c.Focused = c.ID == f.id(f.focus) && f.focus != ""
		b.Controls = append(b.Controls, c)
	}
	switch f.page {
	case PageMain:
		b.Title = "Conformance"
		add(statewire.Control{ID: "h1", Role: "heading", Name: "Conformance"})
		add(statewire.Control{ID: "name", Role: "textbox", Name: "Name", Value: f.name})
		add(statewire.Control{ID: "color", Role: "combobox", Name: "Color", Value: f.color})
		for _, c := range colors {
			add(statewire.Control{ID: "color." + c, Role: "option", Name: c, Selected: c == f.color, Parent: "color"})
		}
		add(statewire.Control{ID: "greet", Role: "button", Name: "Greet"})
		add(statewire.Control{ID: "ask", Role: "button", Name: "Ask"})
		add(statewire.Control{ID: "locked", Role: "button", Name: "Locked", Disabled: true})
		add(statewire.Control{ID: "next", Role: "link", Name: "Next"})
		add(statewire.Control{ID: "status", Role: "status", Name: f.status})
		if f.dialog {
			b.Dialog = &statewire.Dialog{Type: "confirm", Message: "Proceed?"}
			add(statewire.Control{ID: "dialog", Role: "alertdialog", Name: "Proceed?"})
			add(statewire.Control{ID: "dialog.ok", Role: "button", Name: "OK", Description: "Proceed?", Parent: "dialog"})
			add(statewire.Control{ID: "dialog.cancel", Role: "button", Name: "Cancel", Description: "Proceed?", Parent: "dialog"})
		}
	case PageSecond:
		b.Title = "Second"
		add(statewire.Control{ID: "h1", Role: "heading", Name: "Second"})
		add(statewire.Control{ID: "back", Role: "link", Name: "Back"})
	case PageFrames:
		b.Title = "Frames"
		add(statewire.Control{ID: "h1", Role: "heading", Name: "Frames"})
		for _, fr := range []string{"nav", "content"} {
			add(statewire.Control{ID: "open." + fr, Role: "button", Name: "Open", Frame: fr})
			status := ""
			if f.opened[fr] {
				status = "Opened " + fr
			}
			add(statewire.Control{ID: "status." + fr, Role: "status", Name: status, Frame: fr})
		}
	case "404":
		b.Title, b.HTTPStatus = "Not Found", http.StatusNotFound
		add(statewire.Control{ID: "h1", Role: "heading", Name: "Not Found"})
	}
	return b
}
