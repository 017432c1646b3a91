package browser

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"

	"github.com/cuahq/cua/internal/domain"
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
