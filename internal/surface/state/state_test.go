package state_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/state"
	"github.com/cuahq/cua/internal/surface/state/statetest"
	"github.com/cuahq/cua/internal/surface/surfacetest"
	"github.com/cuahq/cua/internal/targeting"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	surfacetest.Exercise(t, func(t *testing.T) surfacetest.Harness {
		srv := statetest.NewFixtureServer()
		t.Cleanup(srv.Close)
		s, err := state.New(srv.URL, srv.Client())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return surfacetest.Harness{Surface: s, URL: srv.PageURL}
	})
}

// testBundle is one fixture server, a surface on it and a policy engine.
type testBundle struct {
	srv *statetest.FixtureServer
	s   *state.Surface
	pol *policy.Engine
	ctx context.Context
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	srv := statetest.NewFixtureServer()
	t.Cleanup(srv.Close)
	s, err := state.New(srv.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	pol, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // only a hang meets it
	t.Cleanup(cancel)
	return &testBundle{srv: srv, s: s, pol: pol, ctx: ctx}
}

func (b *testBundle) act(t *testing.T, a domain.Action, n *domain.Node, text string) (surface.Result, error) {
	t.Helper()
	a.Actor = domain.ActorAutomation
	aa, err := b.pol.Authorize(policy.Request{Action: a, Node: n, Text: text})
	if err != nil {
		t.Fatalf("authorize %s: %v", a.Type, err)
	}
	return b.s.Dispatch(b.ctx, aa)
}

func (b *testBundle) observe(t *testing.T) *domain.UiSnapshot {
	t.Helper()
	raw, err := b.s.Observe(b.ctx)
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	return perception.Normalize(raw)
}

func (b *testBundle) resolve(t *testing.T, snap *domain.UiSnapshot, role, name string) *domain.Node {
	t.Helper()
	r, err := targeting.Resolve(snap, domain.TargetDescriptor{Role: role, Name: &domain.NameMatch{Value: name, Match: domain.MatchExact}})
	if err != nil {
		t.Fatalf("resolve %s %q: %v", role, name, err)
	}
	n := snap.Nodes[r.Node]
	return &n
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "ftp://x", "http://", "http://h/?q=1", "http://h/#f", "::"} {
		if _, err := state.New(bad, nil); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
	if _, err := state.New("https://app.example/base/", nil); err != nil {
		t.Errorf("New with a path: %v", err)
	}
}

func TestAppStateStaysOutOfTheSnapshot(t *testing.T) {
	t.Parallel()
	const canary = "canary-app-state-7f3a"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"url":"http://127.0.0.1/x","title":"T","controls":[
			{"id":"b1","role":"button","name":"Go"},
			{"id":"c1","role":"cell","name":"$1.00","region":"Savings Balance","frame":"content"},
			{"id":"c2","role":"cell","name":"Active","region":"Status","frame":"content"},
			{"id":"c3","role":"cell","name":"x","region":"Status","frame":"content"}],
			"app_state":{"secret_blob":"`+canary+`","b":1,"a":[1,2]},"seq":4}`)
	}))
	t.Cleanup(srv.Close)
	s, err := state.New(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if got := s.ProgressKey(); got != "null" {
		t.Errorf("ProgressKey before any state = %q, want null", got)
	}
	raw, err := s.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	blob, _ := json.Marshal(raw)
	if strings.Contains(string(blob), canary) || strings.Contains(string(blob), "secret_blob") {
		t.Fatal("app_state reached the snapshot")
	}
	if got := s.AppState()["secret_blob"]; got != canary {
		t.Errorf("AppState()[secret_blob] = %v", got)
	}
	if got, want := s.ProgressKey(), `{"a":[1,2],"b":1,"secret_blob":"`+canary+`"}`; got != want {
		t.Errorf("ProgressKey = %s, want %s", got, want)
	}
	// The copy is the caller's.
	s.AppState()["b"] = 99
	if s.AppState()["b"] != float64(1) {
		t.Error("AppState returned shared memory")
	}
	// Shape: frames, region runs, refs.
	snap := perception.Normalize(raw)
	if len(snap.Frames) != 2 || snap.Frames[0].Path != "" || snap.Frames[1].Path != "content" || snap.Frames[1].Name != "content" {
		t.Fatalf("frames = %+v", snap.Frames)
	}
	regions := map[string]string{}
	for _, n := range snap.Nodes {
		if n.Role == "cell" {
			regions[n.Name] = n.Region
			if n.Ref == "" || n.Bounds.Empty() || n.Frame != "content" {
				t.Errorf("cell %q: ref %q bounds %+v frame %q", n.Name, n.Ref, n.Bounds, n.Frame)
			}
		}
	}
	if regions["$1.00"] != "Savings Balance" || regions["Active"] != "Status" || regions["x"] != "Status" {
		t.Errorf("regions = %v", regions)
	}
	r, err := targeting.Resolve(snap, domain.TargetDescriptor{Role: "cell", Anchor: &domain.Anchor{Relation: domain.RelWithinSection, Text: "Savings Balance"}})
	if err != nil || snap.Nodes[r.Node].Name != "$1.00" {
		t.Errorf("within_section Savings Balance: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.AppState() != nil {
		t.Error("Close kept the app state")
	}
}

func TestProgressKeyFollowsTheApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	before := b.s.ProgressKey()
	if _, err := b.act(t, domain.Action{Type: domain.ActNavigate, URL: b.srv.PageURL(statetest.PageMain)}, nil, ""); err != nil {
		t.Fatal(err)
	}
	snap := b.observe(t)
	loaded := b.s.ProgressKey()
	if loaded == before || !strings.Contains(loaded, `"page":"main"`) {
		t.Fatalf("progress key after load = %s (before %s)", loaded, before)
	}
	b.observe(t)
	if again := b.s.ProgressKey(); again != loaded {
		t.Errorf("an unchanged app changed the key: %s -> %s", loaded, again)
	}
	name := b.resolve(t, snap, "textbox", "Name")
	if _, err := b.act(t, domain.Action{Type: domain.ActType, Value: domain.Lit("Ada")}, name, "Ada"); err != nil {
		t.Fatal(err)
	}
	b.observe(t)
	if typed := b.s.ProgressKey(); typed == loaded || !strings.Contains(typed, `"name":"Ada"`) {
		t.Errorf("typing did not change the key: %s", typed)
	}
}

func TestDispatchErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.act(t, domain.Action{Type: domain.ActNavigate, URL: b.srv.PageURL(statetest.PageMain)}, nil, ""); err != nil {
		t.Fatal(err)
	}
	snap := b.observe(t)
	color := b.resolve(t, snap, "combobox", "Color")
	heading := b.resolve(t, snap, "heading", "Conformance")
	ghost := *heading
	ghost.Ref = ""
	tests := []struct {
		name   string
		a      domain.Action
		n      *domain.Node
		text   string
		is     error
		substr string
	}{
		{"wait_for is engine-side", domain.Action{Type: domain.ActWaitFor}, nil, "", surface.ErrUnsupported, ""},
		{"assert is engine-side", domain.Action{Type: domain.ActAssert}, nil, "", surface.ErrUnsupported, ""},
		{"raw input needs pixels", domain.Action{Type: domain.ActRawInput}, nil, "", surface.ErrUnsupported, ""},
		{"unknown option names it", domain.Action{Type: domain.ActSelect, Value: domain.Lit("Mauve")}, color, "Mauve", nil, `"Mauve"`},
		{"type into a heading", domain.Action{Type: domain.ActType, Value: domain.Lit("x")}, heading, "x", nil, "not editable"},
		{"node without a ref", domain.Action{Type: domain.ActClick}, &ghost, "", surface.ErrStale, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.act(t, tt.a, tt.n, tt.text)
			if err == nil {
				t.Fatal("dispatch succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
			if tt.substr != "" && !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("err = %v, want it to mention %s", err, tt.substr)
			}
			if errors.Is(err, surface.ErrCrashed) || errors.Is(err, surface.ErrUnauthorized) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// contractServer answers every act with status and body, and the state
// with a fixed body.
func contractServer(t *testing.T, status int, body string, acts *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == state.ActPath {
			acts.Add(1)
			var req state.ActRequest
			_ = json.NewDecoder(r.Body).Decode(&req)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, strings.ReplaceAll(body, "$TEXT", req.Text))
			return
		}
		_, _ = io.WriteString(w, `{"url":"http://127.0.0.1/","title":"T","controls":[{"id":"f","role":"textbox","name":"PIN"}],"seq":1}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDispatchStatusMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		is     error
		nav    bool
		ok     bool
	}{
		{"ok", 200, `{"navigated":false,"seq":2}`, nil, false, true},
		{"gateway failure is dispatched", 502, `{"error":"bad gateway","navigated":true,"url":"http://127.0.0.1/","seq":3}`, nil, true, true},
		{"unavailable is dispatched", 503, `oops`, nil, true, true},
		{"stale control", 404, `{"error":"no control","code":"stale"}`, surface.ErrStale, false, false},
		{"no contract", 404, `404 page not found`, nil, false, false},
		{"unsupported", 501, `{"error":"nope","code":"unsupported"}`, surface.ErrUnsupported, false, false},
		{"conflict", 409, `{"error":"a dialog is open","code":"dialog_open"}`, nil, false, false},
		{"server error", 500, `boom`, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var acts atomic.Int32
			srv := contractServer(t, tt.status, tt.body, &acts)
			s, err := state.New(srv.URL, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			b := &testBundle{s: s, ctx: t.Context()}
			b.pol, _ = policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
			snap := b.observe(t)
			pin := b.resolve(t, snap, "textbox", "PIN")
			res, err := b.act(t, domain.Action{Type: domain.ActClick}, pin, "")
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
			if err == nil && res.Navigated != tt.nav {
				t.Errorf("Navigated = %v, want %v", res.Navigated, tt.nav)
			}
			if err != nil && (errors.Is(err, surface.ErrCrashed) || errors.Is(err, surface.ErrUnauthorized)) {
				t.Errorf("err = %v", err)
			}
			if acts.Load() != 1 {
				t.Errorf("%d act requests", acts.Load())
			}
		})
	}
}

func TestDispatchScrubsSecretFromErrors(t *testing.T) {
	t.Parallel()
	var acts atomic.Int32
	srv := contractServer(t, 422, `{"error":"value $TEXT is not a valid PIN"}`, &acts)
	s, err := state.New(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	pol, _ := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	b := &testBundle{s: s, ctx: t.Context(), pol: pol}
	pin := b.resolve(t, b.observe(t), "textbox", "PIN")
	aa, err := pol.Authorize(policy.Request{Action: domain.Action{Type: domain.ActType, Actor: domain.ActorAutomation, Value: &domain.ValueExpr{Secret: "pin"}}, Node: pin})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dispatch(t.Context(), aa); !errors.Is(err, surface.ErrUnauthorized) || acts.Load() != 0 {
		t.Fatalf("unbound secret: err = %v, %d requests", err, acts.Load())
	}
	bound, err := aa.BindSecret("80417")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Dispatch(t.Context(), bound)
	if err == nil || strings.Contains(err.Error(), "80417") || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("err = %v, want the secret scrubbed", err)
	}
}

func TestWaitChangeAgainstAServerThatDoesNotHold(t *testing.T) {
	t.Parallel()
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("after") != "" {
			polls.Add(1)
		}
		_, _ = io.WriteString(w, `{"url":"http://127.0.0.1/","title":"T","controls":[],"seq":5}`)
	}))
	t.Cleanup(srv.Close)
	s, err := state.New(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	snap, err := s.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 600*time.Millisecond)
	defer cancel()
	if err := s.WaitChange(ctx, snap.Seq); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitChange = %v, want DeadlineExceeded", err)
	}
	// Backing off from 50 ms, a 600 ms wait polls a handful of times, not
	// thousands. A loaded machine can only make round trips slower and
	// polls fewer, so the lower bound is one: the wait did poll.
	if n := polls.Load(); n < 1 || n > 12 {
		t.Errorf("%d polls in 600 ms", n)
	}
	// A done ctx does no I/O.
	before := polls.Load()
	done, cancelDone := context.WithCancel(t.Context())
	cancelDone()
	if err := s.WaitChange(done, snap.Seq); !errors.Is(err, context.Canceled) || polls.Load() != before {
		t.Errorf("WaitChange on a done ctx = %v after %d polls", err, polls.Load()-before)
	}
	// An unknown observation counts as changed.
	if err := s.WaitChange(t.Context(), 999); err != nil {
		t.Errorf("WaitChange(unknown) = %v", err)
	}
}

func TestCloseWakesWaitChange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	snap := b.observe(t)
	errc := make(chan error, 1)
	go func() { errc <- b.s.WaitChange(b.ctx, snap.Seq) }()
	time.Sleep(100 * time.Millisecond)
	if err := b.s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, surface.ErrCrashed) {
			t.Errorf("WaitChange after Close = %v, want ErrCrashed", err)
		}
	case <-time.After(60 * time.Second): // only a missed wake-up waits this long
		t.Fatal("Close did not wake WaitChange")
	}
	if _, err := b.s.Screenshot(b.ctx); !errors.Is(err, surface.ErrCrashed) {
		t.Errorf("Screenshot after Close = %v", err)
	}
}

func TestUnreachableAppIsACrash(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	s, err := state.New(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.Observe(t.Context()); !errors.Is(err, surface.ErrCrashed) {
		t.Errorf("Observe on a dead app = %v, want ErrCrashed", err)
	}
}

func TestStateErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"not json", 200, "<html>"},
		{"server error", 500, `{"error":"db down"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			s, _ := state.New(srv.URL, srv.Client())
			t.Cleanup(func() { _ = s.Close() })
			_, err := s.Observe(t.Context())
			if err == nil || errors.Is(err, surface.ErrCrashed) {
				t.Errorf("Observe = %v, want a plain error", err)
			}
		})
	}
}

func TestStartSessionWithoutEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.s.StartSession(b.ctx); !errors.Is(err, surface.ErrUnsupported) {
		t.Errorf("StartSession on an app without the endpoint = %v, want ErrUnsupported", err)
	}
}

func TestFocusIsUnsupported(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.act(t, domain.Action{Type: domain.ActNavigate, URL: b.srv.PageURL(surfacetest.PageMain)}, nil, ""); err != nil {
		t.Fatal(err)
	}
	snap := b.observe(t)
	name := b.resolve(t, snap, "textbox", "Name")
	if _, err := b.act(t, domain.Action{Type: domain.ActFocus}, name, ""); !errors.Is(err, surface.ErrUnsupported) {
		t.Fatalf("focus: %v, want ErrUnsupported", err)
	}
	if after := b.observe(t); after.Fingerprint != snap.Fingerprint || len(after.Nodes) != len(snap.Nodes) {
		t.Error("a refused focus changed the screen")
	}
}
