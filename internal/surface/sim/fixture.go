package sim

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

// FixtureBase is the URL prefix of the fixture's pages: page p lives at
// FixtureBase + "/" + p.
const FixtureBase = "http://127.0.0.1/sim"

// Fixture pages.
const (
	FixtureMain   = "main"
	FixtureSecond = "second"
	FixtureFrames = "frames"
	FixtureForm   = "form"
	FixtureSent   = "sent"
)

var fixtureColors = []string{"Red", "Green", "Blue"}

// Fixture is the surfacetest fixture app in Go: the pages "main", "second",
// "frames", "form" and "sent" with the behaviour the conformance suite's package doc
// describes. Before the first navigation it shows an empty about:blank
// document; a URL that names no page shows a 404 "Not Found" page.
//
// A Fixture is driven through a [Surface], which serialises its calls.
type Fixture struct {
	page   string // FixtureMain, FixtureSecond, FixtureFrames, FixtureForm, FixtureSent, "404" or "" (blank)
	posted bool   // the page is the answer to a form POST
	url    string
	gen    int // page loads so far; part of every Ref, so refs of a replaced page go stale
	name   string
	color  string
	status string          // main's status message
	opened map[string]bool // frames page: which frame's Open was clicked
	focus  string          // id of the focused control
	dialog bool            // main's confirm dialog is open
}

var _ App = (*Fixture)(nil)

// NewFixture returns the fixture app showing about:blank.
func NewFixture() *Fixture {
	return &Fixture{url: "about:blank"}
}

// URL returns the URL of a fixture page, as surfacetest.Harness.URL wants.
func (f *Fixture) URL(page string) string { return FixtureBase + "/" + page }

func (f *Fixture) load(url string) {
	f.gen++
	f.url = url
	f.page = "404"
	if page, ok := strings.CutPrefix(url, FixtureBase+"/"); ok {
		switch page {
		case FixtureMain, FixtureSecond, FixtureFrames, FixtureForm, FixtureSent:
			f.page = page
		}
	}
	if url == "about:blank" {
		f.page = ""
	}
	f.name, f.color, f.status, f.focus, f.dialog, f.posted = "", fixtureColors[0], "", "", false, false
	f.opened = map[string]bool{}
}

// Render draws the current page.
func (f *Fixture) Render() *domain.UiSnapshot {
	prefix := "g" + strconv.Itoa(f.gen)
	focus := domain.NodeStates{Focusable: true}
	switch f.page {
	case FixtureMain:
		t := newTree(f.url, "Conformance", prefix)
		doc := t.document("", f.url, "Conformance", 200)
		t.add(doc, domain.Node{Role: "heading", Name: "Conformance", Ref: "h1"})
		t.add(doc, domain.Node{Role: "textbox", Name: "Name", Value: f.name, Ref: "name",
			States: domain.NodeStates{Focusable: true, Editable: true, Focused: f.focus == "name"}})
		color := t.add(doc, domain.Node{Role: "combobox", Name: "Color", Value: f.color, Ref: "color",
			States: domain.NodeStates{Focusable: true, Focused: f.focus == "color"}})
		for _, c := range fixtureColors {
			t.add(color, domain.Node{Role: "option", Name: c, Ref: "color:" + c, States: domain.NodeStates{Selected: c == f.color}})
		}
		t.add(doc, domain.Node{Role: "button", Name: "Greet", Ref: "greet", States: f.focusable("greet")})
		t.add(doc, domain.Node{Role: "button", Name: "Ask", Ref: "ask", States: f.focusable("ask")})
		t.add(doc, domain.Node{Role: "button", Name: "Locked", Ref: "locked", States: domain.NodeStates{Disabled: true}})
		t.add(doc, domain.Node{Role: "link", Name: "Next", Ref: "next", States: f.focusable("next")})
		status := t.add(doc, domain.Node{Role: "status", Ref: "status"})
		if f.status != "" {
			t.text(status, f.status)
		}
		if f.dialog {
			t.dialog(domain.Dialog{Type: "confirm", Message: "Proceed?"})
		}
		return t.snap
	case FixtureSecond:
		t := newTree(f.url, "Second", prefix)
		doc := t.document("", f.url, "Second", 200)
		t.add(doc, domain.Node{Role: "heading", Name: "Second", Ref: "h1"})
		t.add(doc, domain.Node{Role: "link", Name: "Back", Ref: "back", States: focus})
		return t.snap
	case FixtureFrames:
		t := newTree(f.url, "Frames", prefix)
		doc := t.document("", f.url, "Frames", 200)
		t.add(doc, domain.Node{Role: "heading", Name: "Frames", Ref: "h1"})
		for _, fr := range []string{"nav", "content"} {
			t.add(doc, domain.Node{Role: domain.RoleIframe, Name: fr, Ref: "iframe:" + fr})
		}
		for _, fr := range []string{"nav", "content"} {
			root := t.document(fr, FixtureBase+"/frame?name="+fr, "Frame", 200)
			t.add(root, domain.Node{Role: "button", Name: "Open", Ref: "open:" + fr, States: focus})
			status := t.add(root, domain.Node{Role: "status", Ref: "status:" + fr})
			if f.opened[fr] {
				t.text(status, "Opened "+fr)
			}
		}
		return t.snap
	case FixtureForm:
		t := newTree(f.url, "Form", prefix)
		doc := t.document("", f.url, "Form", 200)
		t.add(doc, domain.Node{Role: "heading", Name: "Form", Ref: "h1"})
		t.add(doc, domain.Node{Role: "button", Name: "Send", Ref: "send", States: domain.NodeStates{Focusable: true, Focused: f.focus == "send"}})
		return t.snap
	case FixtureSent:
		t := newTree(f.url, "Sent", prefix)
		doc := t.document("", f.url, "Sent", 200)
		t.add(doc, domain.Node{Role: "heading", Name: "Sent", Ref: "h1"})
		t.add(doc, domain.Node{Role: "link", Name: "Home", Ref: "home", States: domain.NodeStates{Focusable: true, Focused: f.focus == "home"}})
		t.snap.PostBacked = f.posted
		return t.snap
	case "404":
		t := newTree(f.url, "Not Found", prefix)
		doc := t.document("", f.url, "Not Found", 404)
		t.add(doc, domain.Node{Role: "heading", Name: "Not Found", Ref: "h1"})
		t.snap.HTTPStatus = 404
		return t.snap
	}
	t := newTree(f.url, "", prefix)
	t.document("", f.url, "", 0)
	return t.snap
}

// Handle performs one action.
func (f *Fixture) Handle(a policy.AuthorizedAction) (bool, error) {
	switch a.Type() {
	case domain.ActNavigate:
		f.load(a.URL())
		return true, nil
	case domain.ActReload:
		f.load(f.url)
		return true, nil
	case domain.ActRawInput:
		return false, fmt.Errorf("sim fixture: raw_input: %w", surface.ErrUnsupported)
	}
	id := f.focus
	if n := a.Node(); n != nil {
		_, id, _ = strings.Cut(n.Ref, "/")
	}
	if f.dialog && id != "dialog:ok" && id != "dialog:cancel" {
		return false, errors.New("sim fixture: a dialog is open: answer it first")
	}
	switch a.Type() {
	case domain.ActClick:
		return f.click(id)
	case domain.ActType:
		if id != "name" {
			return false, fmt.Errorf("sim fixture: %q is not editable", id)
		}
		f.name, f.focus = a.Text(), id
	case domain.ActSelect:
		if id != "color" {
			return false, fmt.Errorf("sim fixture: %q is not a select", id)
		}
		if !slices.Contains(fixtureColors, a.Text()) {
			return false, fmt.Errorf("sim fixture: Color has no option %q", a.Text())
		}
		f.color, f.focus = a.Text(), id
	case domain.ActPressKey:
		if a.Key() == "Enter" && id == "name" {
			f.greet()
		}
	case domain.ActFocus:
		if id == "locked" || strings.HasPrefix(id, "h1") || id == "status" || strings.HasPrefix(id, "color:") {
			return false, fmt.Errorf("sim fixture: %q is not focusable", id)
		}
		f.focus = id
	default:
		return false, fmt.Errorf("sim fixture: %s: %w", a.Type(), surface.ErrUnsupported)
	}
	return false, nil
}

func (f *Fixture) greet() { f.status = "Hello, " + f.name + " (" + f.color + ")" }

func (f *Fixture) click(id string) (bool, error) {
	switch id {
	case "greet":
		f.greet()
	case "ask":
		f.dialog = true
	case "dialog:ok":
		f.dialog, f.status = false, "Confirmed"
	case "dialog:cancel":
		f.dialog, f.status = false, "Cancelled"
	case "locked":
		return false, errors.New("sim fixture: Locked is disabled")
	case "next":
		f.load(f.URL(FixtureSecond))
		return true, nil
	case "back", "home":
		f.load(f.URL(FixtureMain))
		return true, nil
	case "send":
		// The form's POST answers with the "sent" page itself.
		f.load(f.URL(FixtureSent))
		f.posted = true
		return true, nil
	case "open:nav", "open:content":
		f.opened[strings.TrimPrefix(id, "open:")] = true
	}
	f.focus = id
	return false, nil
}

// focusable returns the states of a focusable control with ref id.
func (f *Fixture) focusable(id string) domain.NodeStates {
	return domain.NodeStates{Focusable: true, Focused: f.focus == id}
}
