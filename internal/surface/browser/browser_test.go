package browser

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// One browser per test binary (STYLE rule 22); every test opens its own
// session.
var (
	shared     *Browser
	sharedErr  error
	sharedOnce sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		// Every session closed in its test's cleanup: no browser context
		// may remain.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := cdp.Call(ctx, chromedp.FromContext(shared.rootCtx).Browser, target.GetBrowserContexts, cdp.Empty{})
		cancel()
		if err == nil && len(res.BrowserContextIDs) > 0 && code == 0 {
			fmt.Fprintln(os.Stderr, "leaked browser contexts:", res.BrowserContextIDs)
			code = 1
		}
		dirs := []string{shared.tmpDir, shared.profileDir}
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close shared browser:", err)
			code = 1
		}
		for _, dir := range dirs {
			if _, err := os.Stat(dir); dir != "" && !os.IsNotExist(err) {
				fmt.Fprintln(os.Stderr, "leaked browser directory:", dir)
				code = 1
			}
		}
	}
	os.Exit(code)
}

func testLogger() *slog.Logger {
	if os.Getenv("CUA_TEST_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// requireBrowser skips without a browser, except under CI, where a missing
// browser fails.
func requireBrowser(tb testing.TB) {
	tb.Helper()
	path := Options{}.withDefaults().ExecPath
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("no browser at %s under CI: %v", path, err)
		}
		tb.Skipf("no browser at %s (install chromium or set CUA_BROWSER); skipped outside CI", path)
	}
}

func sharedBrowser(tb testing.TB) *Browser {
	tb.Helper()
	requireBrowser(tb)
	sharedOnce.Do(func() {
		shared, sharedErr = Launch(context.Background(), Options{Logger: testLogger()})
	})
	if sharedErr != nil {
		tb.Fatalf("launch: %v", sharedErr)
	}
	return shared
}

func newTestSession(tb testing.TB, b *Browser) *Session {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a loaded CI machine
	defer cancel()
	s, err := b.NewSession(ctx)
	if err != nil {
		tb.Fatalf("new session: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// server serves the fixture app at / and this package's pages at /t/, plus
// a few dynamic pages.
func server(tb testing.TB) *httptest.Server {
	tb.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", surfacetest.Handler())
	mux.Handle("/t/", http.StripPrefix("/t/", http.FileServer(http.Dir("testdata"))))
	mux.HandleFunc("/bad", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<h1>Bad gateway</h1>")
	})
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "who", Value: r.URL.Query().Get("v"), Path: "/"})
		fmt.Fprintf(w, "<title>Set</title><h1>set %s</h1>", r.URL.Query().Get("v"))
	})
	mux.HandleFunc("/show", func(w http.ResponseWriter, r *http.Request) {
		v := "none"
		if c, err := r.Cookie("who"); err == nil {
			v = c.Value
		}
		fmt.Fprintf(w, "<title>Show</title><h1>cookie %s</h1>", v)
	})
	mux.HandleFunc("/oopif.html", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := strings.Cut(r.Host, ":")
		fmt.Fprintf(w, `<!doctype html><title>Remote</title><h1>Remote</h1>
<iframe name="remote" src="http://localhost:%s/frame.html?who=remote" style="margin-left:40px;border:3px solid;width:300px;height:120px"></iframe>`, port)
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

// env is one session with a policy engine for the tests of this file.
type env struct {
	s   *Session
	eng *policy.Engine
	ctx context.Context
	srv *httptest.Server
}

func newEnv(t *testing.T, srv *httptest.Server) *env {
	t.Helper()
	eng, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // only a hang meets it
	t.Cleanup(cancel)
	return &env{s: newTestSession(t, sharedBrowser(t)), eng: eng, ctx: ctx, srv: srv}
}

func (e *env) act(t *testing.T, a domain.Action, n *domain.Node, text string) (surface.Result, error) {
	t.Helper()
	a.Actor = domain.ActorAutomation
	aa, err := e.eng.Authorize(policy.Request{Action: a, Node: n, Text: text})
	if err != nil {
		t.Fatalf("authorize: %v", err)
	}
	return e.s.Dispatch(e.ctx, aa)
}

func (e *env) must(t *testing.T, a domain.Action, n *domain.Node, text string) surface.Result {
	t.Helper()
	res, err := e.act(t, a, n, text)
	if err != nil {
		t.Fatalf("dispatch %s: %v", a.Type, err)
	}
	return res
}

func (e *env) waitFor(t *testing.T, what string, pred func(*domain.UiSnapshot) bool) *domain.UiSnapshot {
	t.Helper()
	for {
		snap, err := e.s.Observe(e.ctx)
		if err != nil {
			t.Fatalf("observe: %v", err)
		}
		if pred(snap) {
			return snap
		}
		if err := e.s.WaitChange(e.ctx, snap.Seq); err != nil {
			t.Fatalf("waiting for %s: %v\n%s", what, err, surfacetest.Dump(snap))
		}
	}
}

func (e *env) load(t *testing.T, path, heading string) *domain.UiSnapshot {
	t.Helper()
	e.must(t, domain.Action{Type: domain.ActNavigate, URL: e.srv.URL + path}, nil, "")
	return e.waitFor(t, "heading "+heading, func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "heading", heading, "")
		return ok
	})
}

func find(t *testing.T, s *domain.UiSnapshot, role, name, frame string) domain.Node {
	t.Helper()
	n, ok := surfacetest.Find(s, role, name, frame)
	if !ok {
		t.Fatalf("no %s %q in frame %q:\n%s", role, name, frame, surfacetest.Dump(s))
	}
	return n
}

func TestConformance(t *testing.T) {
	sharedBrowser(t)
	pageURL := surfacetest.Serve(t)
	surfacetest.Exercise(t, func(t *testing.T) surfacetest.Harness {
		return surfacetest.Harness{Surface: newTestSession(t, sharedBrowser(t)), URL: pageURL}
	})
}

func near(a, b float64) bool { return math.Abs(a-b) < 1.5 }

func TestFramesBoundsAndClick(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	snap := e.load(t, "/frames.html", "Frames")
	snap = e.waitFor(t, "both frames", func(s *domain.UiSnapshot) bool {
		_, a := surfacetest.Find(s, "button", "Open", "nav")
		_, b := surfacetest.Find(s, "button", "Open", "content")
		return a && b
	})
	start := time.Now()
	if _, err := e.s.Observe(e.ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("warm Observe of the 3-frame page: %s", time.Since(start))

	fr := snap.Frame("content")
	if fr == nil || fr.Root < 0 {
		t.Fatalf("no content frame: %+v", snap.Frames)
	}
	if snap.Frame("nav") == nil || snap.Frame("nav").Name != "nav" {
		t.Fatalf("no nav frame: %+v", snap.Frames)
	}
	owner := snap.Nodes[snap.Nodes[fr.Root].Parent]
	if owner.Role != domain.RoleIframe || owner.Frame != "" {
		t.Fatalf("content frame hangs under %s %q in frame %q", owner.Role, owner.Name, owner.Frame)
	}
	btn := find(t, snap, "button", "Open", "content")
	if btn.Bounds.Empty() {
		t.Fatalf("button has no box")
	}
	in := btn.Bounds.X >= owner.Bounds.X && btn.Bounds.Y >= owner.Bounds.Y &&
		btn.Bounds.X+btn.Bounds.W <= owner.Bounds.X+owner.Bounds.W && btn.Bounds.Y+btn.Bounds.H <= owner.Bounds.Y+owner.Bounds.H
	if !in {
		t.Errorf("button box %+v is not inside its iframe's box %+v", btn.Bounds, owner.Bounds)
	}
	// The page does not scroll, so page coordinates are what the browser's
	// own content quads say.
	_, backend, _, ok := parseRef(btn.Ref)
	if !ok {
		t.Fatalf("bad ref %q", btn.Ref)
	}
	q, err := call(e.ctx, e.s, e.s.page, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: backend})
	if err != nil || len(q.Quads) == 0 {
		t.Fatalf("content quads: %v", err)
	}
	if !near(q.Quads[0][0], btn.Bounds.X) || !near(q.Quads[0][1], btn.Bounds.Y) {
		t.Errorf("button box %+v, browser quad %v", btn.Bounds, q.Quads[0])
	}
	e.must(t, domain.Action{Type: domain.ActClick}, &btn, "")
	e.waitFor(t, "Opened content", func(s *domain.UiSnapshot) bool { return surfacetest.HasText(s, "Opened content", "content") })
}

func TestOutOfProcessFrame(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	e.load(t, "/oopif.html", "Remote")
	snap := e.waitFor(t, "the remote frame's button", func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "button", "Open", "remote")
		return ok
	})
	fr := snap.Frame("remote")
	if fr == nil || !strings.HasPrefix(fr.URL, "http://localhost:") {
		t.Fatalf("remote frame = %+v", fr)
	}
	owner := snap.Nodes[snap.Nodes[fr.Root].Parent]
	btn := find(t, snap, "button", "Open", "remote")
	// The iframe has a 3px border and the frame's body an 8px margin.
	if !near(btn.Bounds.X, owner.Bounds.X+3+8) || !near(btn.Bounds.Y, owner.Bounds.Y+3+8) {
		t.Errorf("button box %+v is not offset into its iframe %+v", btn.Bounds, owner.Bounds)
	}
	e.must(t, domain.Action{Type: domain.ActClick}, &btn, "")
	e.waitFor(t, "Opened remote", func(s *domain.UiSnapshot) bool { return surfacetest.HasText(s, "Opened remote", "remote") })

	// A cross-site navigation of the page swaps its renderer: the session
	// keeps working, changes included.
	_, port, _ := strings.Cut(strings.TrimPrefix(e.srv.URL, "http://"), ":")
	e.must(t, domain.Action{Type: domain.ActNavigate, URL: "http://localhost:" + port + "/main.html"}, nil, "")
	snap = e.waitFor(t, "main on localhost", func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "button", "Greet", "")
		return ok
	})
	greet := find(t, snap, "button", "Greet", "")
	e.must(t, domain.Action{Type: domain.ActClick}, &greet, "")
	if err := e.s.WaitChange(e.ctx, snap.Seq); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "the greeting", func(s *domain.UiSnapshot) bool { return surfacetest.HasText(s, "Hello,  (Red)", "") })
}

func TestNestedLayoutTables(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	e.must(t, domain.Action{Type: domain.ActNavigate, URL: e.srv.URL + "/t/tables.html"}, nil, "")
	snap := e.waitFor(t, "the table text", func(s *domain.UiSnapshot) bool { return surfacetest.HasText(s, "$1,200.00", "") })
	for _, text := range []string{"Back Office", "J. Smith", "Member 1234", "Balance"} {
		if !surfacetest.HasText(snap, text, "") {
			t.Errorf("no node named %q", text)
		}
	}
	cells := 0
	for _, n := range snap.Nodes {
		if strings.Contains(n.Role, "Cell") || n.Role == "cell" || n.Role == "gridcell" {
			cells++
		}
	}
	if cells < 8 {
		t.Errorf("%d table cells, want the nested tables' cells:\n%s", cells, surfacetest.Dump(snap))
	}
	// The amount sits inside a cell of a table inside a table.
	var amount domain.Node
	for _, n := range snap.Nodes {
		if n.Name == "$1,200.00" {
			amount = n
		}
	}
	tables := 0
	for i := amount.Parent; i >= 0; i = snap.Nodes[i].Parent {
		if r := snap.Nodes[i].Role; strings.Contains(r, "Table") && !strings.Contains(r, "Cell") && !strings.Contains(r, "Row") || r == "table" {
			tables++
		}
	}
	if tables < 3 {
		t.Errorf("the amount is under %d tables, want 3", tables)
	}
	if n := find(t, snap, "button", "Refresh", ""); n.Ref == "" || n.Bounds.Empty() {
		t.Errorf("Refresh = %+v", n)
	}
}

func TestFrameHTTPStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	snap := e.load(t, "/t/status.html", "Outer")
	snap = e.waitFor(t, "the feed frame", func(s *domain.UiSnapshot) bool {
		f := s.Frame("feed")
		return f != nil && f.HTTPStatus != 0
	})
	if f := snap.Frame("feed"); f.HTTPStatus != http.StatusBadGateway {
		t.Errorf("feed frame status = %d, want 502", f.HTTPStatus)
	}
	if snap.Frames[0].HTTPStatus != http.StatusOK {
		t.Errorf("top status = %d, want 200", snap.Frames[0].HTTPStatus)
	}
	if snap.HTTPStatus != http.StatusBadGateway || !snap.StatusIn([]int{502}) {
		t.Errorf("snapshot status = %d, want 502", snap.HTTPStatus)
	}
}

func TestSessionsDoNotShareCookies(t *testing.T) {
	t.Parallel()
	srv := server(t)
	a, b := newEnv(t, srv), newEnv(t, srv)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, e := range []*env{a, b} {
		v := []string{"alpha", "beta"}[i]
		wg.Go(func() {
			errs[i] = func() error {
				for _, path := range []string{"/set?v=" + v, "/show"} {
					aa, err := e.eng.Authorize(policy.Request{Action: domain.Action{Type: domain.ActNavigate, URL: srv.URL + path, Actor: domain.ActorAutomation}})
					if err != nil {
						return err
					}
					if _, err := e.s.Dispatch(e.ctx, aa); err != nil {
						return err
					}
				}
				return nil
			}()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, e := range []*env{a, b} {
		want := "cookie " + []string{"alpha", "beta"}[i]
		e.waitFor(t, want, func(s *domain.UiSnapshot) bool {
			_, ok := surfacetest.Find(s, "heading", want, "")
			return ok
		})
	}
}

func TestTypingPasswordAndEditable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	snap := e.load(t, "/t/form.html", "Sign on")
	pw := find(t, snap, "textbox", "Password", "")
	if !pw.States.Password || !pw.Sensitive {
		t.Errorf("password field states = %+v, sensitive %v", pw.States, pw.Sensitive)
	}
	user := find(t, snap, "textbox", "User", "")
	if user.CSS != "#user" {
		t.Errorf("User CSS hint = %q, want #user", user.CSS)
	}
	if btn := find(t, snap, "button", "Sign on", ""); btn.CSS != "button.btn.primary" {
		t.Errorf("button CSS hint = %q, want button.btn.primary", btn.CSS)
	}
	e.must(t, domain.Action{Type: domain.ActType, Value: domain.Lit("s3cret!")}, &pw, "s3cret!")
	notes := find(t, snap, "textbox", "Notes", "")
	e.must(t, domain.Action{Type: domain.ActType, Value: domain.Lit("new notes")}, &notes, "new notes")
	snap = e.waitFor(t, "the typed values", func(s *domain.UiSnapshot) bool {
		return surfacetest.HasText(s, "new notes", "")
	})
	for _, n := range snap.Nodes {
		if strings.Contains(n.Value, "s3cret") || strings.Contains(n.Name, "s3cret") {
			t.Errorf("the password shows in node %d %s: value %q", n.Index, n.Role, n.Value)
		}
	}
	if got := find(t, snap, "textbox", "Password", ""); len([]rune(got.Value)) != len("s3cret!") {
		t.Logf("password field value as Chromium reports it: %q", got.Value)
	}
}

func TestDialogBlocksNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	snap := e.load(t, "/main.html", "Conformance")
	ask := find(t, snap, "button", "Ask", "")
	start := time.Now()
	e.must(t, domain.Action{Type: domain.ActClick}, &ask, "")
	// A call blocked by the dialog would wait out CallTimeout (10 s);
	// 8 s tells the two apart with room for a loaded machine.
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("a click that opens a dialog took %s", d)
	}
	start = time.Now()
	snap, err := e.s.Observe(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Dialog == nil {
		t.Fatalf("no dialog:\n%s", surfacetest.Dump(snap))
	}
	if _, err := e.s.Screenshot(e.ctx); err == nil {
		t.Error("screenshot during a dialog succeeded")
	}
	greet := find(t, snap, "button", "Greet", "")
	if _, err := e.act(t, domain.Action{Type: domain.ActClick}, &greet, ""); err == nil {
		t.Error("a click behind an open dialog succeeded")
	}
	if d := time.Since(start); d > 8*time.Second { // one blocked call would take CallTimeout (10 s)
		t.Errorf("observe, screenshot and a refused click during a dialog took %s", d)
	}
	// Escape dismisses it.
	e.must(t, domain.Action{Type: domain.ActPressKey, Key: "Escape"}, nil, "")
	e.waitFor(t, "Cancelled", func(s *domain.UiSnapshot) bool { return s.Dialog == nil && surfacetest.HasText(s, "Cancelled", "") })
}

// crashWithin asserts that f returns an error wrapping surface.ErrCrashed
// within d.
// crashBound is how soon a call on a crashed page or a killed browser must
// fail. A call that did not notice would wait out CallTimeout (10 s), so 5 s
// tells the two apart with room for a loaded 2-core CI machine.
const crashBound = 5 * time.Second

func crashWithin(t *testing.T, what string, d time.Duration, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	if !errors.Is(err, surface.ErrCrashed) {
		t.Errorf("%s: err = %v, want ErrCrashed", what, err)
	}
	if el := time.Since(start); el > d {
		t.Errorf("%s took %s, want under %s", what, el, d)
	}
}

func TestRendererCrash(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	snap := e.load(t, "/main.html", "Conformance")
	greet := find(t, snap, "button", "Greet", "")
	go func() {
		// Page.crash never answers.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		cdp.Call(ctx, e.s.page.t, page.Crash, cdp.Empty{})
	}()
	select {
	case <-e.s.alive.Done():
	case <-time.After(60 * time.Second): // only a missed crash waits this long
		t.Fatal("the session did not notice the crash")
	}
	crashWithin(t, "Observe", crashBound, func(ctx context.Context) error {
		_, err := e.s.Observe(ctx)
		return err
	})
	crashWithin(t, "Dispatch", crashBound, func(ctx context.Context) error {
		aa, _ := e.eng.Authorize(policy.Request{Action: domain.Action{Type: domain.ActClick, Actor: domain.ActorAutomation}, Node: &greet})
		_, err := e.s.Dispatch(ctx, aa)
		return err
	})
	crashWithin(t, "WaitChange", crashBound, func(ctx context.Context) error { return e.s.WaitChange(ctx, snap.Seq) })
	crashWithin(t, "Screenshot", crashBound, func(ctx context.Context) error {
		_, err := e.s.Screenshot(ctx)
		return err
	})
	if f := surface.FailureCode(context.Cause(e.s.alive)); f != domain.CodeSurfaceCrashed {
		t.Errorf("failure code %s", f)
	}
}

func TestKilledBrowser(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	srv := server(t)
	b, err := Launch(t.Context(), Options{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{b.tmpDir, b.profileDir}
	if b.profileDir == "" {
		t.Error("no profile directory known")
	}
	s := newTestSession(t, b)
	eng, _ := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	e := &env{s: s, eng: eng, ctx: t.Context(), srv: srv}
	snap := e.load(t, "/main.html", "Conformance")
	if b.proc == nil {
		t.Fatal("no browser process")
	}
	if err := b.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	crashWithin(t, "Observe", crashBound, func(ctx context.Context) error {
		_, err := s.Observe(ctx)
		return err
	})
	crashWithin(t, "WaitChange", crashBound, func(ctx context.Context) error { return s.WaitChange(ctx, snap.Seq) })
	crashWithin(t, "Dispatch", crashBound, func(ctx context.Context) error {
		aa, _ := eng.Authorize(policy.Request{Action: domain.Action{Type: domain.ActReload, Actor: domain.ActorAutomation}})
		_, err := s.Dispatch(ctx, aa)
		return err
	})
	crashWithin(t, "NewSession", crashBound, func(ctx context.Context) error {
		_, err := b.NewSession(ctx)
		return err
	})
	start := time.Now()
	s.Close()
	b.Close()
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("closing a dead browser took %s", d)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s left behind", dir)
		}
	}
}

func TestRawInputAndStaleAfterRemoval(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	snap := e.load(t, "/main.html", "Conformance")
	greet := find(t, snap, "button", "Greet", "")
	x, y := greet.Bounds.Center()
	e.must(t, domain.Action{Type: domain.ActRawInput, X: x, Y: y, Actor: domain.ActorHuman}, nil, "")
	e.waitFor(t, "the greeting", func(s *domain.UiSnapshot) bool { return surfacetest.HasText(s, "Hello,  (Red)", "") })
	// A node removed from its document is stale though its page stays.
	if _, err := call(e.ctx, e.s, e.s.page, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.getElementById('greet').remove()"}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "Greet gone", func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "button", "Greet", "")
		return !ok
	})
	if _, err := e.act(t, domain.Action{Type: domain.ActClick}, &greet, ""); !errors.Is(err, surface.ErrStale) {
		t.Errorf("click on a removed node: %v, want ErrStale", err)
	}
}

func TestClickOptionChoosesIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	snap := e.load(t, "/main.html", "Conformance")
	var blue *domain.Node
	for i, n := range snap.Nodes {
		if n.Role == domain.RoleOption && n.Name == "Blue" {
			blue = &snap.Nodes[i]
		}
	}
	if blue == nil {
		t.Fatalf("no option Blue:\n%s", surfacetest.Dump(snap))
	}
	e.must(t, domain.Action{Type: domain.ActClick}, blue, "")
	e.waitFor(t, "Color = Blue", func(s *domain.UiSnapshot) bool {
		n, ok := surfacetest.Find(s, "combobox", "Color", "")
		return ok && n.Value == "Blue"
	})
}

// TestAttachCDPURL attaches to a browser that runs already (by its
// http://host:port address), and leaves it running on Close.
func TestAttachCDPURL(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	dir := t.TempDir()
	cmd := exec.Command(Options{}.withDefaults().ExecPath, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir="+dir+"/profile", "about:blank")
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers die with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	wsc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, ws, ok := strings.Cut(sc.Text(), "DevTools listening on "); ok {
				wsc <- ws
				break
			}
		}
		for sc.Scan() {
		}
	}()
	var ws string
	select {
	case ws = <-wsc:
	case <-time.After(30 * time.Second):
		t.Fatal("the browser did not print its DevTools address")
	}
	hostport := strings.TrimPrefix(ws, "ws://")
	hostport, _, _ = strings.Cut(hostport, "/")
	b, err := Launch(t.Context(), Options{CDPURL: "http://" + hostport, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	eng, _ := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	e := &env{s: newTestSession(t, b), eng: eng, ctx: t.Context(), srv: server(t)}
	snap := e.load(t, "/main.html", "Conformance")
	greet := find(t, snap, "button", "Greet", "")
	e.must(t, domain.Action{Type: domain.ActClick}, &greet, "")
	e.waitFor(t, "the greeting", func(s *domain.UiSnapshot) bool { return surfacetest.HasText(s, "Hello,  (Red)", "") })
	if err := e.s.Close(); err != nil {
		t.Errorf("close session: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("close browser: %v", err)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the attached browser stopped: %v", err)
	}
}

// TestCacheSeesSilentChange: a value set by script fires no event, but the
// document's signature changes, so the frame's cached tree is not reused.
func TestCacheSeesSilentChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, server(t))
	e.load(t, "/main.html", "Conformance")
	for range 2 { // warm the cache
		if _, err := e.s.Observe(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := call(e.ctx, e.s, e.s.page, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.getElementById('name').value = 'Zed'"}); err != nil {
		t.Fatal(err)
	}
	snap, err := e.s.Observe(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := find(t, snap, "textbox", "Name", ""); n.Value != "Zed" {
		t.Errorf("Name value = %q after a silent change, want Zed", n.Value)
	}
}

func TestLaunchMissingBrowser(t *testing.T) {
	t.Parallel()
	_, err := Launch(t.Context(), Options{ExecPath: "/nonexistent/chromium"})
	if !errors.Is(err, ErrNoBrowser) {
		t.Fatalf("err = %v, want ErrNoBrowser", err)
	}
}

func TestParseRef(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ref string
		ok        bool
	}{
		{"valid", "F1:42:L1", true},
		{"dialog", refDialogAccept, false},
		{"no loader part", "F1:42", false},
		{"bad id", "F1:x:L1", false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, ok := parseRef(tc.ref)
			if ok != tc.ok {
				t.Errorf("parseRef(%q) ok = %v, want %v", tc.ref, ok, tc.ok)
			}
		})
	}
}

// BenchmarkObserve measures Observe on the 3-frame fixture page: "warm"
// reuses the cached accessibility trees of unchanged frames, "cold" fetches
// every tree again.
func BenchmarkObserve(b *testing.B) {
	requireBrowser(b)
	srv := server(b)
	s := newTestSession(b, sharedBrowser(b))
	ctx := context.Background()
	if _, err := call(ctx, s, s.page, page.Navigate, page.NavigateParams{URL: srv.URL + "/frames.html"}); err != nil {
		b.Fatal(err)
	}
	for {
		snap, err := s.Observe(ctx)
		if err != nil {
			b.Fatal(err)
		}
		_, nav := surfacetest.Find(snap, "button", "Open", "nav")
		_, content := surfacetest.Find(snap, "button", "Open", "content")
		if nav && content {
			break
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = s.WaitChange(wctx, snap.Seq)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"warm", "cold"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				if mode == "cold" {
					s.ax.reset()
				}
				if _, err := s.Observe(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
