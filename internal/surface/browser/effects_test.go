package browser

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// postServer counts the form POSTs it receives: /submit renders its result
// directly (200), /submit303 answers 303 to a GET page.
type postServer struct {
	*httptest.Server
	posts, posts303 atomic.Int64
}

func newPostServer(t *testing.T) *postServer {
	t.Helper()
	ps := &postServer{}
	mux := http.NewServeMux()
	form := func(action string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><title>Form</title><h1>Form</h1>
<form method="post" action="%s"><input name="amount" value="5" aria-label="Amount"><button>Send</button></form>`, action)
		}
	}
	mux.HandleFunc("GET /form", form("/submit"))
	mux.HandleFunc("GET /form303", form("/submit303"))
	mux.HandleFunc("POST /submit", func(w http.ResponseWriter, r *http.Request) {
		n := ps.posts.Add(1)
		fmt.Fprintf(w, `<!doctype html><title>Sent</title><h1>Sent</h1><p>post %d</p><a href="/done">Done</a>`, n)
	})
	mux.HandleFunc("POST /submit303", func(w http.ResponseWriter, r *http.Request) {
		ps.posts303.Add(1)
		http.Redirect(w, r, "/result", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /result", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Result</title><h1>Result</h1>`)
	})
	mux.HandleFunc("GET /done", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Done</title><h1>Done</h1>`)
	})
	ps.Server = httptest.NewServer(mux)
	t.Cleanup(ps.Close)
	return ps
}

func TestReloadOfPostedDocumentIsRefused(t *testing.T) {
	t.Parallel()
	ps := newPostServer(t)
	e := newEnv(t, ps.Server)
	snap := e.load(t, "/form", "Form")
	if snap.PostBacked {
		t.Fatal("a GET page is PostBacked")
	}
	e.must(t, domain.Action{Type: domain.ActClick}, ptr(find(t, snap, "button", "Send", "")), "")
	snap = e.waitFor(t, "the result page", func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "heading", "Sent", "")
		return ok
	})
	if !snap.PostBacked {
		t.Fatalf("the page a form POST rendered is not PostBacked (%s)", snap.URL)
	}
	_, err := e.act(t, domain.Action{Type: domain.ActReload}, nil, "")
	if !errors.Is(err, surface.ErrResubmit) {
		t.Fatalf("reload of a POST-backed page: %v, want ErrResubmit", err)
	}
	time.Sleep(300 * time.Millisecond) // a reload that went out would land by now
	if n := ps.posts.Load(); n != 1 {
		t.Fatalf("the server saw %d POSTs, want 1", n)
	}
	if snap, err := e.s.Observe(e.ctx); err != nil || !snap.PostBacked || !surfacetest.HasText(snap, "post 1", "") {
		t.Fatalf("after the refused reload: err %v, snapshot:\n%s", err, surfacetest.Dump(snap))
	}

	// A GET navigation leaves the POST behind.
	snap = e.load(t, "/done", "Done")
	if snap.PostBacked {
		t.Error("a page reached by GET after a POST is PostBacked")
	}
	e.must(t, domain.Action{Type: domain.ActReload}, nil, "")

	// POST → 303 → GET: the document came from the GET.
	snap = e.load(t, "/form303", "Form")
	e.must(t, domain.Action{Type: domain.ActClick}, ptr(find(t, snap, "button", "Send", "")), "")
	snap = e.waitFor(t, "the redirected result", func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "heading", "Result", "")
		return ok
	})
	if snap.PostBacked {
		t.Error("a page reached by POST→303→GET is PostBacked")
	}
	e.must(t, domain.Action{Type: domain.ActReload}, nil, "")
	e.waitFor(t, "the reloaded result", func(s *domain.UiSnapshot) bool {
		_, ok := surfacetest.Find(s, "heading", "Result", "")
		return ok
	})
	if n := ps.posts303.Load(); n != 1 {
		t.Errorf("the 303 form was posted %d times, want 1", n)
	}
	if n := ps.posts.Load(); n != 1 {
		t.Errorf("the server saw %d POSTs in the end, want 1", n)
	}
}

func ptr(n domain.Node) *domain.Node { return &n }

// trapServer serves pages where an action does not land.
func trapServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var body string
		switch r.URL.Path {
		case "/upper":
			body = `<h1>Upper</h1><input aria-label="Code" oninput="this.value = this.value.toUpperCase()">`
		case "/steal":
			body = `<h1>Steal</h1><input aria-label="Member" onfocus="document.getElementById('pop').focus()">
<div><input id="pop" aria-label="Popup"></div>`
		case "/overlay":
			body = `<h1>Overlay</h1><button onclick="window.clicks = (window.clicks || 0) + 1; document.getElementById('n').textContent = 'clicked ' + window.clicks">Show</button>
<p id="n">none</p>
<div id="cover" style="position:fixed;inset:0;background:rgba(0,0,0,.3)"></div>`
		case "/vanish":
			body = `<h1>Vanish</h1><input aria-label="Code" oninput="this.remove()">`
		case "/focus":
			body = `<h1>Focus</h1><input aria-label="First"><input aria-label="Second">
<p id="f">none</p><script>document.addEventListener('focusin', (e) => { document.getElementById('f').textContent = 'focused ' + e.target.getAttribute('aria-label'); });</script>`
		default:
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<!doctype html><title>T</title>%s", body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFocusMovesFocusWithoutClicking(t *testing.T) {
	t.Parallel()
	e := newEnv(t, trapServer(t))
	snap := e.load(t, "/focus", "Focus")
	second := find(t, snap, "textbox", "Second", "")
	e.must(t, domain.Action{Type: domain.ActFocus}, &second, "")
	snap = e.waitFor(t, "Second focused", func(s *domain.UiSnapshot) bool { return surfacetest.HasText(s, "focused Second", "") })
	if n := find(t, snap, "textbox", "Second", ""); !n.States.Focused {
		t.Errorf("Second is not focused in the snapshot: %+v", n.States)
	}
}

func TestTypedValueThatDoesNotLandIsNotQuoted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, trapServer(t))
	snap := e.load(t, "/upper", "Upper")
	code := find(t, snap, "textbox", "Code", "")
	const typed = "quiet-canary-7731"
	_, err := e.act(t, domain.Action{Type: domain.ActType}, &code, typed)
	if !errors.Is(err, surface.ErrNotLanded) {
		t.Fatalf("type into a field that rewrites it: %v, want ErrNotLanded", err)
	}
	if errors.Is(err, surface.ErrStale) {
		t.Errorf("a value that did not land is also ErrStale: %v", err)
	}
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "canary") || strings.Contains(msg, "7731") {
		t.Errorf("the error quotes the field's content: %v", err)
	}
	if !strings.Contains(err.Error(), "17 characters") {
		t.Errorf("the error does not say how many characters were expected: %v", err)
	}
}

func TestTypingRefusedWhenFocusIsStolen(t *testing.T) {
	t.Parallel()
	e := newEnv(t, trapServer(t))
	snap := e.load(t, "/steal", "Steal")
	member := find(t, snap, "textbox", "Member", "")
	_, err := e.act(t, domain.Action{Type: domain.ActType}, &member, "12345")
	if !errors.Is(err, surface.ErrNotLanded) {
		t.Fatalf("type while a popup steals focus: %v, want ErrNotLanded", err)
	}
	res, err := call(e.ctx, e.s, e.s.page, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.getElementById('pop').value", ReturnByValue: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Result.Value); got != `""` {
		t.Errorf("the popup received the text: %s", got)
	}
}

func TestClickOnCoveredNodeIsNotSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, trapServer(t))
	snap := e.load(t, "/overlay", "Overlay")
	show := find(t, snap, "button", "Show", "")
	_, err := e.act(t, domain.Action{Type: domain.ActClick}, &show, "")
	if !errors.Is(err, surface.ErrNotLanded) {
		t.Fatalf("click on a covered button: %v, want ErrNotLanded", err)
	}
	if !strings.Contains(err.Error(), "id=cover") {
		t.Errorf("the error does not name the covering element: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	snap, err = e.s.Observe(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !surfacetest.HasText(snap, "none", "") {
		t.Errorf("the covered button was clicked:\n%s", surfacetest.Dump(snap))
	}
	// Without the cover the same node is clicked.
	if _, err := call(e.ctx, e.s, e.s.page, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.getElementById('cover').remove()"}); err != nil {
		t.Fatal(err)
	}
	e.must(t, domain.Action{Type: domain.ActClick}, &show, "")
	e.waitFor(t, "the click", func(s *domain.UiSnapshot) bool { return surfacetest.HasText(s, "clicked 1", "") })
}

func TestEnvIsAnAllowlist(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"PATH": "/bin", "HOME": "/root", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "TZ": "UTC",
		"DISPLAY": ":0", "XAUTHORITY": "/root/.Xauthority", "CUA_SECRET_PIN": "1234",
		"OPENAI_API_KEY": "sk-x", "GOOGLE_API_KEY": "g",
	}
	getenv := func(k string) string { return vars[k] }
	tests := []struct {
		name    string
		headful bool
		want    []string
	}{
		{"headless", false, []string{"PATH=/bin", "HOME=/run/x/home", "TMPDIR=/run/x", "BREAKPAD_DUMP_LOCATION=/run/x/profile/crashes", "LANG=C.UTF-8", "TZ=UTC"}},
		{"headful", true, []string{"PATH=/bin", "HOME=/run/x/home", "TMPDIR=/run/x", "BREAKPAD_DUMP_LOCATION=/run/x/profile/crashes", "LANG=C.UTF-8", "TZ=UTC", "DISPLAY=:0", "XAUTHORITY=/root/.Xauthority"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Env("/run/x", "/run/x/profile", tc.headful, getenv)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Env = %q, want %q", got, tc.want)
			}
		})
	}
	if got := Env("/run/x", "/run/x/p", false, func(string) string { return "" }); got[0] != "PATH=/usr/local/bin:/usr/bin:/bin" {
		t.Errorf("default PATH: %q", got[0])
	}
}

// descendants returns pid and the ids of all its descendant processes.
func descendants(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(raw[strings.LastIndexByte(string(raw), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(fields[1]); err == nil {
			parent[id] = pp
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		for c, p := range parent {
			if p == out[i] {
				out = append(out, c)
			}
		}
	}
	return out
}

// canaryForms are the encodings of a canary a file might hold it in.
func canaryForms(c string) []string {
	return []string{c, base64.StdEncoding.EncodeToString([]byte(c)), hex.EncodeToString([]byte(c)), url.QueryEscape(c), c[:12]}
}

// TestBrowserEnvironmentHoldsNoSecret launches its own browser with a canary
// in the test process's environment (so it cannot run in parallel).
func TestBrowserEnvironmentHoldsNoSecret(t *testing.T) {
	requireBrowser(t)
	const canary = "cua-canary-5f1e9b27d04c"
	t.Setenv("CUA_SECRET_CANARY", canary)
	srv := server(t)
	b, err := Launch(t.Context(), Options{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if b.proc == nil {
		t.Fatal("no browser process")
	}
	if !strings.HasPrefix(b.profileDir, b.tmpDir+string(filepath.Separator)) {
		t.Errorf("profile %s is not inside the run's temp dir %s", b.profileDir, b.tmpDir)
	}
	s := newTestSession(t, b)
	eng, _ := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	e := &env{s: s, eng: eng, ctx: t.Context(), srv: srv}
	e.load(t, "/main.html", "Conformance")

	pids := descendants(t, b.proc.Pid)
	if len(pids) < 2 {
		t.Errorf("found %d browser processes, want the browser and its helpers", len(pids))
	}
	read := 0
	for _, pid := range pids {
		raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err != nil {
			continue // exited meanwhile
		}
		read++
		env := string(raw)
		if strings.Contains(env, canary) || strings.Contains(env, "CUA_SECRET_") {
			t.Errorf("process %d has the canary in its environment", pid)
		}
		if strings.Contains(env, "GOOGLE_API_KEY") {
			t.Errorf("process %d has the wrapper's API keys in its environment", pid)
		}
		if pid == b.proc.Pid && !strings.Contains(env, "\x00HOME="+filepath.Join(b.tmpDir, "home")+"\x00") {
			t.Errorf("the browser's HOME is not inside its temp dir: %q", strings.ReplaceAll(env, "\x00", " "))
		}
	}
	if read == 0 {
		t.Fatal("no browser environment could be read")
	}

	// A renderer crash writes nothing that holds the canary, and no dump.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		cdp.Call(ctx, s.page.t, page.Crash, cdp.Empty{})
	}()
	select {
	case <-s.alive.Done():
	case <-time.After(60 * time.Second): // only a missed crash waits this long
		t.Fatal("the session did not notice the crash")
	}
	time.Sleep(500 * time.Millisecond) // a crash handler would write by now
	files := 0
	err = filepath.WalkDir(b.tmpDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		files++
		if strings.HasSuffix(path, ".dmp") || strings.Contains(path, "crashes"+string(filepath.Separator)) {
			t.Errorf("crash dump written: %s", path)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, form := range canaryForms(canary) {
			if strings.Contains(string(raw), form) {
				t.Errorf("%s holds the canary (as %q)", path, form)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Error("the profile holds no file: the scan saw nothing")
	}
	dir := b.tmpDir
	s.Close()
	if err := b.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the browser's temp dir %s is left after Close", dir)
	}
}

func TestBrowserBinarySkipsDebianWrapper(t *testing.T) {
	t.Parallel()
	if got := browserBinary("/opt/chrome/chrome"); got != "/opt/chrome/chrome" {
		t.Errorf("browserBinary(other) = %s", got)
	}
	if _, err := os.Stat(debianBinary); err != nil {
		t.Skip("no Debian chromium here")
	}
	if got := browserBinary(debianWrapper); got != debianBinary {
		t.Errorf("browserBinary(%s) = %s, want %s", debianWrapper, got, debianBinary)
	}
}

func TestNodeDetachedMidTypeDidNotLand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, trapServer(t))
	snap := e.load(t, "/vanish", "Vanish")
	code := find(t, snap, "textbox", "Code", "")
	_, err := e.act(t, domain.Action{Type: domain.ActType}, &code, "abc")
	if !errors.Is(err, surface.ErrNotLanded) || errors.Is(err, surface.ErrStale) {
		t.Fatalf("type into a field that removes itself: %v, want ErrNotLanded and not ErrStale", err)
	}
	// The node is gone now: an action on it is stale, nothing is sent.
	if _, err := e.act(t, domain.Action{Type: domain.ActType}, &code, "abc"); !errors.Is(err, surface.ErrStale) {
		t.Errorf("type into the removed field: %v, want ErrStale", err)
	}
}

func TestKeyPressRefusedWhenFocusIsStolen(t *testing.T) {
	t.Parallel()
	e := newEnv(t, trapServer(t))
	snap := e.load(t, "/steal", "Steal")
	member := find(t, snap, "textbox", "Member", "")
	if _, err := e.act(t, domain.Action{Type: domain.ActPressKey, Key: "Enter"}, &member, ""); !errors.Is(err, surface.ErrNotLanded) {
		t.Fatalf("press Enter while a popup steals focus: %v, want ErrNotLanded", err)
	}
}
