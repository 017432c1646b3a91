package runtime_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface/sim"
)

const (
	base      = "http://app.test"
	secretRef = "bank_password"
	plaintext = "s3cr3t-Pa55word"
)

// received is one action as the app saw it.
type received struct {
	typ    domain.ActionType
	ref    string
	text   string
	actor  domain.Actor
	url    string
	secret string
}

// loginApp is a tiny sim.App: a sign-in page with a textbox "Password", a
// button "Go" (which loads a home page at landURL), a button "Delete
// account" and two links "More". Every action it handles is recorded.
type loginApp struct {
	url      string // the current page
	landURL  string // where Go leads
	frameURL string // when set, the page has an iframe "ads" at this URL
	page     int    // bumped on every page load, so refs are never reused
	password string
	got      []received
}

var _ sim.App = (*loginApp)(nil)

func newLoginApp() *loginApp { return &loginApp{url: base + "/login", landURL: base + "/home"} }

func (a *loginApp) Render() *domain.UiSnapshot {
	ref := func(s string) string { return fmt.Sprintf("p%d:%s", a.page, s) }
	s := &domain.UiSnapshot{URL: a.url, Title: "Bank"}
	add := func(parent int, n domain.Node) int {
		i := len(s.Nodes)
		n.Index, n.Parent = i, parent
		if parent >= 0 {
			s.Nodes[parent].Children = append(s.Nodes[parent].Children, i)
		}
		n.Bounds = domain.Rect{X: 8, Y: 8 + 28*float64(i), W: 400, H: 24}
		s.Nodes = append(s.Nodes, n)
		return i
	}
	root := add(-1, domain.Node{Role: "RootWebArea", Name: "Bank", Ref: ref("doc")})
	s.Frames = []domain.Frame{{ID: "top", Path: "", URL: a.url, Root: root}}
	if strings.HasSuffix(a.url, "/login") {
		add(root, domain.Node{Role: "heading", Name: "Sign in"})
		add(root, domain.Node{Role: "textbox", Name: "Password", Ref: ref("pw"), Value: strings.Repeat("•", len(a.password)),
			States: domain.NodeStates{Focusable: true, Editable: true, Password: true}, Sensitive: true})
		add(root, domain.Node{Role: "button", Name: "Go", Ref: ref("go"), States: domain.NodeStates{Focusable: true}})
		add(root, domain.Node{Role: "button", Name: "Delete account", Ref: ref("del"), States: domain.NodeStates{Focusable: true}})
		add(root, domain.Node{Role: "link", Name: "More", Ref: ref("more1"), States: domain.NodeStates{Focusable: true}})
		add(root, domain.Node{Role: "link", Name: "More", Ref: ref("more2"), States: domain.NodeStates{Focusable: true}})
	} else {
		add(root, domain.Node{Role: "heading", Name: "Welcome"})
	}
	if a.frameURL != "" {
		fr := add(-1, domain.Node{Role: "RootWebArea", Name: "ads", Frame: "ads", Ref: ref("ads")})
		s.Frames = append(s.Frames, domain.Frame{ID: "ads", Name: "ads", Path: "ads", URL: a.frameURL, Root: fr})
	}
	return s
}

func (a *loginApp) Handle(act policy.AuthorizedAction) (bool, error) {
	r := received{typ: act.Type(), text: act.Text(), actor: act.Actor(), url: act.URL(), secret: act.SecretRef()}
	if n := act.Node(); n != nil {
		r.ref = n.Ref
	}
	a.got = append(a.got, r)
	switch {
	case act.Type() == domain.ActType && strings.HasSuffix(r.ref, ":pw"):
		a.password = act.Text()
	case act.Type() == domain.ActClick && strings.HasSuffix(r.ref, ":go"):
		a.url = a.landURL
		a.page++
		return true, nil
	case act.Type() == domain.ActNavigate:
		a.url = act.URL()
		a.page++
		return true, nil
	}
	return false, nil
}

// secrets is a SecretSource over a map that counts its calls and can run a
// hook (to move the lease mid-dispatch).
type secrets struct {
	mu     sync.Mutex
	values map[string]string
	calls  []string
	hook   func()
}

func (s *secrets) Secret(ref string) (string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, ref)
	hook := s.hook
	v, ok := s.values[ref]
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	if !ok {
		return "", fmt.Errorf("secret %q not found", ref)
	}
	return v, nil
}

func (s *secrets) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// sink records events in memory.
type sink struct {
	mu     sync.Mutex
	events []evidence.Event
}

func (s *sink) Append(e evidence.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	return nil
}

func (s *sink) types() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.events {
		out = append(out, e.Type)
	}
	return out
}

// last returns the newest event of type typ.
func (s *sink) last(tb testing.TB, typ string) evidence.Event {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.events) - 1; i >= 0; i-- {
		if s.events[i].Type == typ {
			return s.events[i]
		}
	}
	tb.Fatalf("no %q event among %d", typ, len(s.events))
	return evidence.Event{}
}

// tee appends to several sinks.
type tee []runtime.EventSink

func (t tee) Append(e evidence.Event) error {
	for _, s := range t {
		if err := s.Append(e); err != nil {
			return err
		}
	}
	return nil
}

type testBundle struct {
	app      *loginApp
	surf     *sim.Surface
	lease    *hitl.Lease
	red      *redact.Redactor
	secrets  *secrets
	events   *sink
	evidence *evidence.Bundle
	d        *runtime.Dispatcher
}

type setupOpts struct {
	profile policy.Profile
	allowed []domain.ActionType
	actor   domain.Actor
	app     func(*loginApp)
}

// setup wires a dispatcher over the login app with an AUTOMATION policy
// allowing app.test, a lease held by "automation", a secret source holding
// bank_password, and both an in-memory sink and a real evidence bundle.
func setup(tb testing.TB, opts setupOpts) *testBundle {
	tb.Helper()
	if opts.profile == "" {
		opts.profile = policy.ProfileAutomation
	}
	b := &testBundle{
		app:     newLoginApp(),
		lease:   hitl.NewLease("automation"),
		red:     redact.New(),
		secrets: &secrets{values: map[string]string{secretRef: plaintext}},
		events:  &sink{},
	}
	if opts.app != nil {
		opts.app(b.app)
	}
	b.surf = sim.New(b.app)
	tb.Cleanup(func() { _ = b.surf.Close() })
	pol, err := policy.New(policy.Config{Profile: opts.profile, AllowedDomains: []string{"app.test"}, AllowedActions: opts.allowed})
	if err != nil {
		tb.Fatal(err)
	}
	ev, err := evidence.Open(tb.TempDir(), "run-1", b.red)
	if err != nil {
		tb.Fatal(err)
	}
	b.evidence = ev
	tb.Cleanup(func() { _ = ev.Close() })
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b.d, err = runtime.New(runtime.Config{
		Surface: b.surf, Policy: pol, Lease: b.lease, Holder: "automation",
		Secrets: b.secrets, Redactor: b.red, Events: tee{b.events, ev},
		Now: func() time.Time { return clock }, Actor: opts.actor,
	})
	if err != nil {
		tb.Fatalf("runtime.New: %v", err)
	}
	return b
}

// observe observes or fails.
func (b *testBundle) observe(tb testing.TB) *domain.UiSnapshot {
	tb.Helper()
	s, err := b.d.Observe(tb.Context())
	if err != nil {
		tb.Fatalf("Observe: %v", err)
	}
	return s
}

// eventLog closes the evidence bundle and returns events.jsonl.
func (b *testBundle) eventLog(tb testing.TB) string {
	tb.Helper()
	if err := b.evidence.Close(); err != nil {
		tb.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(b.evidence.Dir(), "events.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(raw)
}

func target(role, name string) *domain.TargetDescriptor {
	return &domain.TargetDescriptor{Role: role, Name: &domain.NameMatch{Value: name, Match: domain.MatchExact}}
}

func typeSecret() domain.Action {
	return domain.Action{Type: domain.ActType, StepID: "password", Target: target("textbox", "Password"), Value: &domain.ValueExpr{Secret: secretRef}}
}

func clickGo() domain.Action {
	return domain.Action{Type: domain.ActClick, StepID: "go", Target: target("button", "Go")}
}

func wantCode(tb testing.TB, err error, code domain.FailureCode) {
	tb.Helper()
	if got := domain.ErrorCode(err); got != code {
		tb.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}
