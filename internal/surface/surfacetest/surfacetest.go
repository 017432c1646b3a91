// Package surfacetest is the conformance suite of the surface port: every
// adapter (browser, sim, later state and desktop) runs [Exercise] against its
// own presentation of one small fixture app, described here so that an
// adapter without HTML (the in-memory sim, the desktop-like desktopsim) can
// implement it exactly. The package must never depend on an adapter: it
// holds every adapter to the port's contract from the outside.
//
// # The fixture app
//
// The app has three pages, each reachable by the URL the harness gives for
// its name ([Harness.URL]); the URLs are http(s) URLs on one host, which the
// suite adds to the policy's navigation allowlist.
//
// Page "main" (document title "Conformance"):
//
//   - a heading (level 1) "Conformance";
//   - a textbox "Name", empty when the page loads;
//   - a combobox "Color" (a single-choice select) with the options "Red",
//     "Green" and "Blue" in that order, "Red" selected when the page loads;
//     its Value is the selected option's label;
//   - a button "Greet": clicking it sets the status message to
//     "Hello, <name> (<color>)" with the current Name value and selected
//     Color, e.g. "Hello, Ada (Blue)";
//   - pressing Enter while "Name" has focus does exactly what "Greet" does;
//   - a button "Ask": clicking it opens a confirm dialog with the message
//     "Proceed?"; accepting it (OK) sets the status message to "Confirmed",
//     dismissing it (Cancel) to "Cancelled";
//   - a button "Locked", disabled: a click on it fails with an error and
//     changes nothing (were it clickable it would show "Unlocked");
//   - a link "Next" to page "second";
//   - a status element (role "status") holding the status message, empty
//     when the page loads. The message shows in the snapshot as a node whose
//     Name is exactly the message (the browser: a StaticText child).
//
// Loading or reloading "main" always gives the load state above (Name empty,
// "Red", no message).
//
// Page "second" (title "Second"): a heading "Second" and a link "Back" to
// "main".
//
// Page "form" (title "Form"), optional: a heading "Form" and a button
// "Send" that submits a form by POST; the answer renders page "sent"
// directly (200, no redirect), so that document is POST-backed. Page
// "sent" (title "Sent"): a heading "Sent" and a link "Home" to "main". An
// adapter that cannot produce a POST-backed document returns "" from
// [Harness.URL] for PageForm, and the suite skips the checks that need one.
//
// Page "frames" (title "Frames"): a heading "Frames" and two child frames,
// the first named "nav", the second "content" (Frame paths "nav" and
// "content"). Each frame holds a button "Open" and an empty status element;
// clicking "Open" shows "Opened nav" or "Opened content" inside that frame
// only.
//
// # What the suite checks
//
// The suite checks each raw snapshot for well-formedness, then looks for
// nodes in its [perception.Normalize]d form, as the engine does: an adapter
// emits canonical roles only ("document", "text", "textbox", "combobox",
// "button", "link", "heading": domain/roles.go), mapped from its
// platform's names inside the adapter, and may emit unnamed containers and
// other noise Normalize drops. Beyond the app's behaviour:
//
//   - every raw node's Role is in the canonical vocabulary (domain.IsRole);
//   - raw snapshots are well formed: Nodes[i].Index == i; a root's Parent is -1,
//     every other Parent is a valid index whose Children list the node; the
//     first Frame is the top document with Path "" and a valid Root; nodes of
//     the top document have Frame ""; nodes of a child frame carry its path;
//   - the controls of "main" have a non-empty Bounds and a non-empty Ref;
//   - Seq increases with every Observe;
//   - an invalid (zero) AuthorizedAction, and one whose secret is not bound,
//     are refused with surface.ErrUnauthorized and change nothing;
//   - type clears first (typing twice leaves the second text);
//   - select picks by label; an unknown label is an error that names it;
//   - click, press_key Enter, navigate, reload, and a JavaScript dialog
//     answered through its synthesized nodes: a node of role "alertdialog"
//     named by the message with child buttons "OK" (accept) and "Cancel"
//     (dismiss), while Snapshot.Dialog reports {confirm, Proceed?};
//   - WaitChange returns nil once a change is pending and ctx's error at its
//     deadline on a quiet page; ChangedSince answers true and false in the
//     same two cases, without waiting;
//   - a node of a replaced page is refused with surface.ErrStale;
//   - extract (engine-side) is refused with surface.ErrUnsupported;
//   - focus moves keyboard focus to "Name" without clicking it (the
//     snapshot shows it Focused and a key press with no target goes
//     there); an adapter without focus returns surface.ErrUnsupported and
//     the check is skipped;
//   - the snapshot of "sent" reached by submitting "form" is PostBacked; a
//     reload there is refused with surface.ErrResubmit and changes nothing;
//     a GET navigation afterwards is not PostBacked; no page loaded by GET
//     is PostBacked;
//   - "has the screen changed since snapshot N": WaitChange(N) answers at
//     once and ChangedSince(N) is true after an action that changed the
//     screen, also when a later snapshot was taken in between;
//   - Screenshot returns a PNG or surface.ErrNoFrame;
//   - Close is idempotent, and a closed surface refuses Observe.
package surfacetest

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

// Page names of the fixture app.
const (
	PageMain   = "main"
	PageSecond = "second"
	PageFrames = "frames"
	// PageForm submits a form by POST and shows PageSent (optional).
	PageForm = "form"
	PageSent = "sent"
)

// Harness is one adapter's presentation of the fixture app.
type Harness struct {
	// Surface is a fresh session on the app, showing no page yet (or any
	// page: every test navigates first). The opener registers its cleanup;
	// the suite may Close it too.
	Surface surface.Surface
	// URL returns the http(s) URL of a fixture page (PageMain, PageSecond,
	// PageFrames). Every URL has the same host.
	URL func(page string) string
}

//go:embed testdata/*.html
var pages embed.FS

// Handler serves the fixture app as HTML: /main.html, /second.html,
// /frames.html, the frames' /frame.html, /form.html and /sent.html, which
// is also the answer to the form's POST. Any other POST is refused (405).
func Handler() http.Handler {
	sub, err := fs.Sub(pages, "testdata")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/sent.html":
			w.Header().Set("Cache-Control", "no-store")
			http.ServeFileFS(w, r, sub, "sent.html")
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			files.ServeHTTP(w, r)
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

// Serve starts an HTTP server of the fixture app on 127.0.0.1 for the
// length of tb and returns the URL function a Harness needs.
func Serve(tb testing.TB) func(page string) string {
	tb.Helper()
	srv := httptest.NewServer(Handler())
	tb.Cleanup(srv.Close)
	return func(page string) string { return srv.URL + "/" + page + ".html" }
}

// maxParallel bounds how many sub-tests hold a session at once.
const maxParallel = 3

// testTimeout bounds one sub-test. It only catches a hang, so it is
// generous: CI runs every package at once on 2 shared cores, where a
// browser sub-test can take many times longer than here.
const testTimeout = 120 * time.Second

// Exercise runs the conformance suite. open is called once per sub-test and
// returns a new session on the fixture app.
func Exercise(t *testing.T, open func(t *testing.T) Harness) {
	t.Helper()
	sem := make(chan struct{}, maxParallel)
	tests := []struct {
		name string
		run  func(t *testing.T, b *bundle)
	}{
		{"Observe", testObserve},
		{"SeqIncreases", testSeq},
		{"RefusesUnauthorized", testUnauthorized},
		{"RefusesUnboundSecret", testUnboundSecret},
		{"TypeClearsFirst", testType},
		{"SelectByLabel", testSelect},
		{"ClickShowsText", testClick},
		{"DisabledClickFails", testDisabled},
		{"PressEnter", testPressEnter},
		{"NavigateAndLink", testNavigate},
		{"Reload", testReload},
		{"DialogAccept", func(t *testing.T, b *bundle) { testDialog(t, b, "OK", "Confirmed") }},
		{"DialogDismiss", func(t *testing.T, b *bundle) { testDialog(t, b, "Cancel", "Cancelled") }},
		{"WaitChangePending", testWaitPending},
		{"WaitChangeDeadline", testWaitDeadline},
		{"StaleRef", testStale},
		{"Unsupported", testUnsupported},
		{"FrameScoped", testFrames},
		{"Focus", testFocus},
		{"ReloadOfPostRefused", testResubmit},
		{"ChangedSinceSnapshot", testChangedSince},
		{"Screenshot", testScreenshot},
		{"CloseIdempotent", testClose},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			tc.run(t, setup(t, open))
		})
	}
}

// bundle is what one sub-test works with.
type bundle struct {
	h   Harness
	s   surface.Surface
	eng *policy.Engine
	ctx context.Context
}

func setup(t *testing.T, open func(t *testing.T) Harness) *bundle {
	t.Helper()
	h := open(t)
	if h.Surface == nil || h.URL == nil {
		t.Fatal("harness has no Surface or URL")
	}
	u, err := url.Parse(h.URL(PageMain))
	if err != nil || u.Hostname() == "" {
		t.Fatalf("harness URL %q has no host", h.URL(PageMain))
	}
	eng, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{u.Hostname()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return &bundle{h: h, s: h.Surface, eng: eng, ctx: ctx}
}

// authorize makes a valid AuthorizedAction through the policy chokepoint.
func (b *bundle) authorize(t *testing.T, a domain.Action, n *domain.Node, text string) policy.AuthorizedAction {
	t.Helper()
	if a.Actor == "" {
		a.Actor = domain.ActorAutomation
	}
	aa, err := b.eng.Authorize(policy.Request{Action: a, Node: n, Text: text})
	if err != nil {
		t.Fatalf("authorize %s: %v", a.Type, err)
	}
	return aa
}

// act authorizes and dispatches one action.
func (b *bundle) act(t *testing.T, a domain.Action, n *domain.Node, text string) (surface.Result, error) {
	t.Helper()
	return b.s.Dispatch(b.ctx, b.authorize(t, a, n, text))
}

// must is act that fails the test on an error.
func (b *bundle) must(t *testing.T, a domain.Action, n *domain.Node, text string) surface.Result {
	t.Helper()
	res, err := b.act(t, a, n, text)
	if err != nil {
		t.Fatalf("dispatch %s on %s: %v", a.Type, describe(n), err)
	}
	return res
}

// observe checks the adapter's raw snapshot and returns it normalised, as
// the engine sees it.
func (b *bundle) observe(t *testing.T) *domain.UiSnapshot {
	t.Helper()
	raw, err := b.s.Observe(b.ctx)
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	checkWellFormed(t, raw)
	return perception.Normalize(raw)
}

// waitFor observes until pred holds, waiting for changes in between.
func (b *bundle) waitFor(t *testing.T, what string, pred func(*domain.UiSnapshot) bool) *domain.UiSnapshot {
	t.Helper()
	for {
		snap := b.observe(t)
		if pred(snap) {
			return snap
		}
		if err := b.s.WaitChange(b.ctx, snap.Seq); err != nil {
			t.Fatalf("waiting for %s: %v\nlast snapshot:\n%s", what, err, Dump(snap))
		}
	}
}

// load navigates to a fixture page and waits for its heading.
func (b *bundle) load(t *testing.T, page string) *domain.UiSnapshot {
	t.Helper()
	b.must(t, domain.Action{Type: domain.ActNavigate, URL: b.h.URL(page)}, nil, "")
	heading := map[string]string{PageMain: "Conformance", PageSecond: "Second", PageFrames: "Frames", PageForm: "Form", PageSent: "Sent"}[page]
	return b.waitFor(t, "heading "+heading, func(s *domain.UiSnapshot) bool {
		if _, ok := Find(s, "heading", heading, ""); !ok {
			return false
		}
		if page == PageFrames {
			_, nav := Find(s, "button", "Open", "nav")
			_, content := Find(s, "button", "Open", "content")
			return nav && content
		}
		_, ok := Find(s, "button", "Greet", "")
		return page != PageMain || ok
	})
}

// node finds the one node of role and name in frame, or fails.
func node(t *testing.T, s *domain.UiSnapshot, role, name, frame string) domain.Node {
	t.Helper()
	n, ok := Find(s, role, name, frame)
	if !ok {
		t.Fatalf("no %s %q in frame %q:\n%s", role, name, frame, Dump(s))
	}
	return n
}

// Find returns the first node of the canonical role with the cleaned name
// in the frame path (any frame when frame is "*"). Roles are compared as
// they are: adapters emit canonical roles.
func Find(s *domain.UiSnapshot, role, name, frame string) (domain.Node, bool) {
	for _, n := range s.Nodes {
		if n.Role == role && perception.CleanName(n.Name) == perception.CleanName(name) && (frame == "*" || n.Frame == frame) {
			return n, true
		}
	}
	return domain.Node{}, false
}

// HasText reports whether a node in the frame path (any when "*") is named
// exactly text.
func HasText(s *domain.UiSnapshot, text, frame string) bool {
	for _, n := range s.Nodes {
		if perception.CleanName(n.Name) == perception.CleanName(text) && (frame == "*" || n.Frame == frame) {
			return true
		}
	}
	return false
}

// Dump renders a snapshot for failure messages.
func Dump(s *domain.UiSnapshot) string {
	if s == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seq=%d url=%s title=%q status=%d", s.Seq, s.URL, s.Title, s.HTTPStatus)
	if s.Dialog != nil {
		fmt.Fprintf(&b, " dialog=%s:%q", s.Dialog.Type, s.Dialog.Message)
	}
	b.WriteByte('\n')
	for _, n := range s.Nodes {
		fmt.Fprintf(&b, "%s%d %s %q", strings.Repeat("  ", min(n.Depth, 30)), n.Index, n.Role, n.Name)
		if n.Value != "" {
			fmt.Fprintf(&b, " value=%q", n.Value)
		}
		if n.Frame != "" {
			fmt.Fprintf(&b, " frame=%s", n.Frame)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func describe(n *domain.Node) string {
	if n == nil {
		return "no node"
	}
	return fmt.Sprintf("%s %q", n.Role, n.Name)
}

func checkWellFormed(t *testing.T, s *domain.UiSnapshot) {
	t.Helper()
	if s == nil {
		t.Fatal("nil snapshot")
	}
	for i, n := range s.Nodes {
		if n.Index != i {
			t.Fatalf("node %d has Index %d", i, n.Index)
		}
		if !domain.IsRole(n.Role) {
			t.Fatalf("node %d has role %q, not a canonical role (domain/roles.go): the adapter must map its platform's roles", i, n.Role)
		}
		if n.Parent < -1 || n.Parent >= len(s.Nodes) {
			t.Fatalf("node %d has Parent %d", i, n.Parent)
		}
		if n.Parent >= 0 && !contains(s.Nodes[n.Parent].Children, i) {
			t.Fatalf("node %d is not among the Children of its Parent %d", i, n.Parent)
		}
		for _, c := range n.Children {
			if c < 0 || c >= len(s.Nodes) || s.Nodes[c].Parent != i {
				t.Fatalf("node %d lists child %d whose Parent is not %d", i, c, i)
			}
		}
	}
	if len(s.Frames) > 0 {
		if s.Frames[0].Path != "" {
			t.Fatalf("first frame has Path %q, want the top document", s.Frames[0].Path)
		}
		for _, f := range s.Frames {
			if f.Root < 0 || f.Root >= len(s.Nodes) {
				continue
			}
			if got := s.Nodes[f.Root].Frame; got != f.Path {
				t.Fatalf("root of frame %q is in frame %q", f.Path, got)
			}
		}
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func testObserve(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	if snap.URL != b.h.URL(PageMain) {
		t.Errorf("URL = %q, want %q", snap.URL, b.h.URL(PageMain))
	}
	if snap.Title != "Conformance" {
		t.Errorf("Title = %q, want Conformance", snap.Title)
	}
	if snap.Seq == 0 {
		t.Error("Seq = 0")
	}
	if len(snap.Frames) == 0 || snap.Frames[0].Path != "" || snap.Frames[0].Root < 0 {
		t.Errorf("Frames = %+v, want the top document first with a root", snap.Frames)
	}
	if snap.Dialog != nil {
		t.Errorf("Dialog = %+v, want none", snap.Dialog)
	}
	for _, want := range []struct{ role, name string }{
		{"textbox", "Name"}, {"combobox", "Color"}, {"button", "Greet"},
		{"button", "Ask"}, {"button", "Locked"}, {"link", "Next"},
	} {
		n := node(t, snap, want.role, want.name, "")
		if n.Ref == "" {
			t.Errorf("%s %q has no Ref", want.role, want.name)
		}
		if n.Bounds.Empty() {
			t.Errorf("%s %q has an empty box %+v", want.role, want.name, n.Bounds)
		}
	}
	if n := node(t, snap, "textbox", "Name", ""); n.Value != "" {
		t.Errorf("Name value at load = %q, want empty", n.Value)
	}
	if n := node(t, snap, "combobox", "Color", ""); n.Value != "Red" {
		t.Errorf("Color value at load = %q, want Red", n.Value)
	}
	if n := node(t, snap, "button", "Locked", ""); !n.States.Disabled {
		t.Error("Locked is not disabled")
	}
}

func testSeq(t *testing.T, b *bundle) {
	first := b.load(t, PageMain)
	second := b.observe(t)
	third := b.observe(t)
	if !(first.Seq < second.Seq && second.Seq < third.Seq) {
		t.Errorf("Seq did not increase: %d, %d, %d", first.Seq, second.Seq, third.Seq)
	}
}

func testUnauthorized(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	if _, err := b.s.Dispatch(b.ctx, policy.AuthorizedAction{}); !errors.Is(err, surface.ErrUnauthorized) {
		t.Fatalf("zero action: err = %v, want ErrUnauthorized", err)
	}
	after := b.observe(t)
	if n := node(t, after, "textbox", "Name", ""); n.Value != "" {
		t.Errorf("Name changed to %q", n.Value)
	}
	if HasText(after, "Hello,  (Red)", "*") || after.URL != snap.URL {
		t.Error("the refused action changed the page")
	}
}

func testUnboundSecret(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	name := node(t, snap, "textbox", "Name", "")
	a := b.authorize(t, domain.Action{Type: domain.ActType, Value: &domain.ValueExpr{Secret: "pin"}}, &name, "")
	if !a.NeedsSecret() {
		t.Fatal("policy did not leave the secret unbound")
	}
	if _, err := b.s.Dispatch(b.ctx, a); !errors.Is(err, surface.ErrUnauthorized) {
		t.Fatalf("unbound secret: err = %v, want ErrUnauthorized", err)
	}
	if n := node(t, b.observe(t), "textbox", "Name", ""); n.Value != "" {
		t.Fatalf("Name changed to %q", n.Value)
	}
	bound, err := a.BindSecret("4321")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.Dispatch(b.ctx, bound); err != nil {
		t.Fatalf("bound secret: %v", err)
	}
	b.waitFor(t, "Name = 4321", func(s *domain.UiSnapshot) bool {
		n, ok := Find(s, "textbox", "Name", "")
		return ok && n.Value == "4321"
	})
}

func typeInto(t *testing.T, b *bundle, snap *domain.UiSnapshot, text string) {
	t.Helper()
	n := node(t, snap, "textbox", "Name", "")
	b.must(t, domain.Action{Type: domain.ActType, Value: domain.Lit(text)}, &n, text)
}

func testType(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	typeInto(t, b, snap, "Grace")
	snap = b.waitFor(t, "Name = Grace", func(s *domain.UiSnapshot) bool {
		n, ok := Find(s, "textbox", "Name", "")
		return ok && n.Value == "Grace"
	})
	typeInto(t, b, snap, "Ada")
	b.waitFor(t, "Name = Ada", func(s *domain.UiSnapshot) bool {
		n, ok := Find(s, "textbox", "Name", "")
		return ok && n.Value == "Ada"
	})
}

func testSelect(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	color := node(t, snap, "combobox", "Color", "")
	b.must(t, domain.Action{Type: domain.ActSelect, Value: domain.Lit("Green")}, &color, "Green")
	snap = b.waitFor(t, "Color = Green", func(s *domain.UiSnapshot) bool {
		n, ok := Find(s, "combobox", "Color", "")
		return ok && n.Value == "Green"
	})
	color = node(t, snap, "combobox", "Color", "")
	_, err := b.act(t, domain.Action{Type: domain.ActSelect, Value: domain.Lit("Purple")}, &color, "Purple")
	if err == nil || !strings.Contains(err.Error(), "Purple") {
		t.Fatalf("unknown label: err = %v, want an error naming Purple", err)
	}
	if n := node(t, b.observe(t), "combobox", "Color", ""); n.Value != "Green" {
		t.Errorf("Color = %q after a failed select, want Green", n.Value)
	}
}

func testClick(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	typeInto(t, b, snap, "Ada")
	color := node(t, snap, "combobox", "Color", "")
	b.must(t, domain.Action{Type: domain.ActSelect, Value: domain.Lit("Blue")}, &color, "Blue")
	snap = b.observe(t)
	greet := node(t, snap, "button", "Greet", "")
	b.must(t, domain.Action{Type: domain.ActClick}, &greet, "")
	if err := b.s.WaitChange(b.ctx, snap.Seq); err != nil {
		t.Fatalf("WaitChange after click: %v", err)
	}
	b.waitFor(t, "Hello, Ada (Blue)", func(s *domain.UiSnapshot) bool { return HasText(s, "Hello, Ada (Blue)", "") })
}

func testDisabled(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	locked := node(t, snap, "button", "Locked", "")
	_, err := b.act(t, domain.Action{Type: domain.ActClick}, &locked, "")
	if err == nil {
		t.Fatal("click on a disabled button succeeded")
	}
	if errors.Is(err, surface.ErrUnauthorized) || errors.Is(err, surface.ErrCrashed) {
		t.Fatalf("click on a disabled button: %v", err)
	}
	if HasText(b.observe(t), "Unlocked", "*") {
		t.Fatal("the disabled button fired")
	}
}

func testPressEnter(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	typeInto(t, b, snap, "Lin")
	name := node(t, b.observe(t), "textbox", "Name", "")
	b.must(t, domain.Action{Type: domain.ActPressKey, Key: "Enter"}, &name, "")
	b.waitFor(t, "Hello, Lin (Red)", func(s *domain.UiSnapshot) bool { return HasText(s, "Hello, Lin (Red)", "") })
}

func testNavigate(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	next := node(t, snap, "link", "Next", "")
	res := b.must(t, domain.Action{Type: domain.ActClick}, &next, "")
	if !res.Navigated {
		t.Error("clicking a link: Result.Navigated = false")
	}
	snap = b.waitFor(t, "heading Second", func(s *domain.UiSnapshot) bool {
		_, ok := Find(s, "heading", "Second", "")
		return ok
	})
	if snap.URL != b.h.URL(PageSecond) {
		t.Errorf("URL = %q, want %q", snap.URL, b.h.URL(PageSecond))
	}
	if res.URL != "" && res.URL != b.h.URL(PageSecond) {
		t.Errorf("Result.URL = %q, want %q", res.URL, b.h.URL(PageSecond))
	}
	res = b.must(t, domain.Action{Type: domain.ActNavigate, URL: b.h.URL(PageMain)}, nil, "")
	if !res.Navigated || res.URL != b.h.URL(PageMain) {
		t.Errorf("navigate: Result = %+v, want Navigated to %s", res, b.h.URL(PageMain))
	}
	b.waitFor(t, "heading Conformance", func(s *domain.UiSnapshot) bool {
		_, ok := Find(s, "heading", "Conformance", "")
		return ok && s.URL == b.h.URL(PageMain)
	})
}

func testReload(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	typeInto(t, b, snap, "Ada")
	b.waitFor(t, "Name = Ada", func(s *domain.UiSnapshot) bool {
		n, ok := Find(s, "textbox", "Name", "")
		return ok && n.Value == "Ada"
	})
	b.must(t, domain.Action{Type: domain.ActReload}, nil, "")
	b.waitFor(t, "a fresh page", func(s *domain.UiSnapshot) bool {
		n, ok := Find(s, "textbox", "Name", "")
		_, heading := Find(s, "heading", "Conformance", "")
		return ok && heading && n.Value == ""
	})
}

func testDialog(t *testing.T, b *bundle, answer, want string) {
	snap := b.load(t, PageMain)
	ask := node(t, snap, "button", "Ask", "")
	b.must(t, domain.Action{Type: domain.ActClick}, &ask, "")
	snap = b.waitFor(t, "the dialog", func(s *domain.UiSnapshot) bool { return s.Dialog != nil })
	if snap.Dialog.Type != "confirm" || snap.Dialog.Message != "Proceed?" {
		t.Errorf("Dialog = %+v, want confirm Proceed?", *snap.Dialog)
	}
	dlg := node(t, snap, "alertdialog", "Proceed?", "")
	btn := node(t, snap, "button", answer, "")
	if btn.Parent != dlg.Index {
		t.Errorf("button %q is not a child of the alertdialog", answer)
	}
	if btn.Description != "Proceed?" {
		t.Errorf("button %q Description = %q, want the message", answer, btn.Description)
	}
	if _, ok := Find(snap, "button", map[string]string{"OK": "Cancel", "Cancel": "OK"}[answer], ""); !ok {
		t.Errorf("the dialog has no second button")
	}
	b.must(t, domain.Action{Type: domain.ActClick}, &btn, "")
	b.waitFor(t, want, func(s *domain.UiSnapshot) bool { return s.Dialog == nil && HasText(s, want, "") })
}

func testWaitPending(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	typeInto(t, b, snap, "Ada")
	// A WaitChange that missed the pending change would wait out ctx
	// (60 s) on the quiet page; 20 s tells the two apart on a loaded machine.
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	start := time.Now()
	if err := b.s.WaitChange(ctx, snap.Seq); err != nil {
		t.Fatalf("WaitChange with a pending change: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("WaitChange with a pending change took %s", d)
	}
	if changed, err := b.s.ChangedSince(ctx, snap.Seq); err != nil || !changed {
		t.Errorf("ChangedSince(%d) with a pending change = %v, %v; want true", snap.Seq, changed, err)
	}
}

func testWaitDeadline(t *testing.T, b *bundle) {
	b.load(t, PageMain)
	// A page that just loaded may still report load events: wait until a
	// whole window passes quietly.
	for range 20 {
		snap := b.observe(t)
		ctx, cancel := context.WithTimeout(b.ctx, 300*time.Millisecond)
		start := time.Now()
		err := b.s.WaitChange(ctx, snap.Seq)
		cancel()
		if err == nil {
			continue
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitChange on a quiet page: %v, want DeadlineExceeded", err)
		}
		// A WaitChange that ignored its 300 ms deadline would run to the
		// sub-test's; 10 s leaves room for a slow CDP round trip.
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("WaitChange overran its deadline: %s", d)
		}
		changed, err := b.s.ChangedSince(b.ctx, snap.Seq)
		if err != nil {
			t.Fatalf("ChangedSince on a quiet page: %v", err)
		}
		if changed {
			continue // a late event: the next window must be quiet
		}
		return
	}
	t.Fatal("the page never became quiet (WaitChange never timed out with ChangedSince false)")
}

func testStale(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	greet := node(t, snap, "button", "Greet", "")
	b.load(t, PageSecond)
	_, err := b.act(t, domain.Action{Type: domain.ActClick}, &greet, "")
	if !errors.Is(err, surface.ErrStale) {
		t.Fatalf("click on a node of the replaced page: err = %v, want ErrStale", err)
	}
}

func testUnsupported(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	h := node(t, snap, "heading", "Conformance", "")
	_, err := b.act(t, domain.Action{Type: domain.ActExtract}, &h, "")
	if !errors.Is(err, surface.ErrUnsupported) {
		t.Fatalf("extract: err = %v, want ErrUnsupported", err)
	}
}

func testFrames(t *testing.T, b *bundle) {
	snap := b.load(t, PageFrames)
	paths := map[string]bool{}
	for _, f := range snap.Frames {
		paths[f.Path] = true
	}
	if !paths[""] || !paths["nav"] || !paths["content"] {
		t.Fatalf("frame paths = %v, want \"\", nav and content", paths)
	}
	if f := snap.Frame("nav"); f == nil || f.Name != "nav" {
		t.Errorf("frame nav = %+v, want Name nav", f)
	}
	nav := node(t, snap, "button", "Open", "nav")
	content := node(t, snap, "button", "Open", "content")
	if nav.Ref == content.Ref || nav.Index == content.Index {
		t.Fatal("the two Open buttons are one node")
	}
	b.must(t, domain.Action{Type: domain.ActClick}, &content, "")
	snap = b.waitFor(t, "Opened content", func(s *domain.UiSnapshot) bool { return HasText(s, "Opened content", "content") })
	if HasText(snap, "Opened nav", "*") {
		t.Error("clicking Open in content also opened nav")
	}
}

func testScreenshot(t *testing.T, b *bundle) {
	b.load(t, PageMain)
	png, err := b.s.Screenshot(b.ctx)
	if errors.Is(err, surface.ErrNoFrame) {
		return
	}
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot is not a PNG (%d bytes)", len(png))
	}
}

func testClose(t *testing.T, b *bundle) {
	b.load(t, PageMain)
	if err := b.s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := b.s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := b.s.Observe(b.ctx); err == nil {
		t.Fatal("Observe after Close succeeded")
	}
}

func testFocus(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	name := node(t, snap, "textbox", "Name", "")
	if name.States.Focused {
		t.Fatal("Name is focused before focus")
	}
	_, err := b.act(t, domain.Action{Type: domain.ActFocus}, &name, "")
	if errors.Is(err, surface.ErrUnsupported) {
		t.Skipf("the adapter has no focus: %v", err)
	}
	if err != nil {
		t.Fatalf("focus Name: %v", err)
	}
	b.waitFor(t, "Name focused", func(s *domain.UiSnapshot) bool {
		n, ok := Find(s, "textbox", "Name", "")
		return ok && n.States.Focused
	})
	if HasText(b.observe(t), "Hello", "") {
		t.Fatal("focus acted like a click or a key press")
	}
	b.must(t, domain.Action{Type: domain.ActPressKey, Key: "Enter"}, nil, "")
	b.waitFor(t, "Hello, (Red)", func(s *domain.UiSnapshot) bool { return HasText(s, "Hello, (Red)", "") })
}

func testResubmit(t *testing.T, b *bundle) {
	if b.h.URL(PageForm) == "" {
		t.Skip("the adapter cannot produce a POST-backed document")
	}
	snap := b.load(t, PageMain)
	if snap.PostBacked {
		t.Fatal("a page loaded by GET is PostBacked")
	}
	snap = b.load(t, PageForm)
	if snap.PostBacked {
		t.Fatal("the form page, loaded by GET, is PostBacked")
	}
	send := node(t, snap, "button", "Send", "")
	b.must(t, domain.Action{Type: domain.ActClick}, &send, "")
	snap = b.waitFor(t, "heading Sent", func(s *domain.UiSnapshot) bool {
		_, ok := Find(s, "heading", "Sent", "")
		return ok
	})
	if !snap.PostBacked {
		t.Fatal("the page a form POST rendered is not PostBacked")
	}
	_, err := b.act(t, domain.Action{Type: domain.ActReload}, nil, "")
	if !errors.Is(err, surface.ErrResubmit) {
		t.Fatalf("reload of a POST-backed page: err = %v, want ErrResubmit", err)
	}
	if surface.FailureCode(err) == domain.CodeSurfaceError {
		t.Errorf("a refused resubmit maps to %s", domain.CodeSurfaceError)
	}
	snap = b.observe(t)
	if _, ok := Find(snap, "heading", "Sent", ""); !ok || !snap.PostBacked {
		t.Fatalf("the refused reload changed the page:\n%s", Dump(snap))
	}
	snap = b.load(t, PageMain)
	if snap.PostBacked {
		t.Error("a page reached by GET after a POST is PostBacked")
	}
}

func testChangedSince(t *testing.T, b *bundle) {
	snap := b.load(t, PageMain)
	n := snap.Seq
	greet := node(t, snap, "button", "Greet", "")
	b.must(t, domain.Action{Type: domain.ActClick}, &greet, "")
	b.waitFor(t, "the greeting", func(s *domain.UiSnapshot) bool { return HasText(s, "Hello, (Red)", "") })
	// Snapshots taken since do not hide that the screen changed after N.
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second) // returns at once when it passes
	defer cancel()
	if err := b.s.WaitChange(ctx, n); err != nil {
		t.Fatalf("WaitChange(%d) after a change and later snapshots: %v", n, err)
	}
	if changed, err := b.s.ChangedSince(ctx, n); err != nil || !changed {
		t.Fatalf("ChangedSince(%d) after a change and later snapshots = %v, %v; want true", n, changed, err)
	}
}
