package sim_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
	"github.com/cuahq/cua/internal/surface/surfacetest"
	"github.com/cuahq/cua/internal/targeting"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	surfacetest.Exercise(t, func(t *testing.T) surfacetest.Harness {
		fx := sim.NewFixture()
		s := sim.New(fx)
		t.Cleanup(func() { _ = s.Close() })
		return surfacetest.Harness{Surface: s, URL: fx.URL}
	})
}

// countingApp records what reaches it; it never changes.
type countingApp struct{ handled int }

func (c *countingApp) Render() *domain.UiSnapshot {
	return &domain.UiSnapshot{URL: "http://127.0.0.1/x", Nodes: []domain.Node{
		{Index: 0, Role: "document", Parent: -1, Children: []int{1}, Ref: "doc", Bounds: domain.Rect{W: 800, H: 600}},
		{Index: 1, Role: "button", Name: "Go", Parent: 0, Ref: "go", Bounds: domain.Rect{X: 10, Y: 10, W: 60, H: 24}},
	}, Frames: []domain.Frame{{Path: "", Root: 0, URL: "http://127.0.0.1/x"}}}
}

func (c *countingApp) Handle(policy.AuthorizedAction) (bool, error) {
	c.handled++
	return false, nil
}

// testBundle is what one sim test works with.
type testBundle struct {
	ctx context.Context
	pol *policy.Engine
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	pol, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}, AllowIrreversible: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // only a hang meets it
	t.Cleanup(cancel)
	return &testBundle{ctx: ctx, pol: pol}
}

func (b *testBundle) authorize(t *testing.T, a domain.Action, n *domain.Node, text string) policy.AuthorizedAction {
	t.Helper()
	a.Actor = domain.ActorAutomation
	aa, err := b.pol.Authorize(policy.Request{Action: a, Node: n, Text: text})
	if err != nil {
		t.Fatalf("authorize %s: %v", a.Type, err)
	}
	return aa
}

func (b *testBundle) observe(t *testing.T, s *sim.Surface) *domain.UiSnapshot {
	t.Helper()
	raw, err := s.Observe(b.ctx)
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	checkWellFormed(t, raw)
	return perception.Normalize(raw)
}

// act dispatches a on the node (role, name) of the current screen (nil
// target when role is "").
func (b *testBundle) act(t *testing.T, s *sim.Surface, a domain.Action, role, name, text string) (surface.Result, error) {
	t.Helper()
	var n *domain.Node
	if role != "" {
		snap := b.observe(t, s)
		node, ok := surfacetest.Find(snap, role, name, "*")
		if !ok {
			t.Fatalf("no %s %q:\n%s", role, name, surfacetest.Dump(snap))
		}
		n = &node
	}
	return s.Dispatch(b.ctx, b.authorize(t, a, n, text))
}

func (b *testBundle) must(t *testing.T, s *sim.Surface, a domain.Action, role, name, text string) surface.Result {
	t.Helper()
	res, err := b.act(t, s, a, role, name, text)
	if err != nil {
		t.Fatalf("%s %s %q: %v", a.Type, role, name, err)
	}
	return res
}

func checkWellFormed(t *testing.T, s *domain.UiSnapshot) {
	t.Helper()
	for i, n := range s.Nodes {
		if n.Index != i || n.Parent < -1 || n.Parent >= len(s.Nodes) {
			t.Fatalf("node %d: Index %d Parent %d", i, n.Index, n.Parent)
		}
		if n.Parent >= 0 && !slices.Contains(s.Nodes[n.Parent].Children, i) {
			t.Fatalf("node %d is not listed by its parent", i)
		}
		if n.Ref == "" || n.Bounds.Empty() {
			t.Fatalf("node %d (%s %q) has no Ref or box", i, n.Role, n.Name)
		}
	}
	if len(s.Frames) == 0 || s.Frames[0].Path != "" {
		t.Fatalf("frames %+v: want the top document first", s.Frames)
	}
	for _, f := range s.Frames {
		if f.Root < 0 || f.Root >= len(s.Nodes) || s.Nodes[f.Root].Frame != f.Path || s.Nodes[f.Root].Parent != -1 {
			t.Fatalf("frame %q has a bad root %d", f.Path, f.Root)
		}
	}
}

func TestSurfaceRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		action  func(t *testing.T, b *testBundle, s *sim.Surface) policy.AuthorizedAction
		wantErr error
	}{
		{"zero action", func(*testing.T, *testBundle, *sim.Surface) policy.AuthorizedAction {
			return policy.AuthorizedAction{}
		}, surface.ErrUnauthorized},
		{"unbound secret", func(t *testing.T, b *testBundle, s *sim.Surface) policy.AuthorizedAction {
			n := b.observe(t, s).Nodes[1]
			return b.authorize(t, domain.Action{Type: domain.ActType, Value: &domain.ValueExpr{Secret: "pin"}}, &n, "")
		}, surface.ErrUnauthorized},
		{"extract is engine-side", func(t *testing.T, b *testBundle, s *sim.Surface) policy.AuthorizedAction {
			n := b.observe(t, s).Nodes[1]
			return b.authorize(t, domain.Action{Type: domain.ActExtract}, &n, "")
		}, surface.ErrUnsupported},
		{"node of another page", func(t *testing.T, b *testBundle, s *sim.Surface) policy.AuthorizedAction {
			n := b.observe(t, s).Nodes[1]
			n.Ref = "elsewhere"
			return b.authorize(t, domain.Action{Type: domain.ActClick}, &n, "")
		}, surface.ErrStale},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			app := &countingApp{}
			s := sim.New(app)
			a := tc.action(t, b, s)
			if _, err := s.Dispatch(b.ctx, a); !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if app.handled != 0 || len(s.Actions()) != 0 {
				t.Errorf("the refused action reached the app (%d handled, %d recorded)", app.handled, len(s.Actions()))
			}
			snap := b.observe(t, s)
			ctx, cancel := context.WithTimeout(b.ctx, 20*time.Millisecond)
			defer cancel()
			if err := s.WaitChange(ctx, snap.Seq); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a refused action counted as a change: WaitChange = %v", err)
			}
		})
	}
}

func TestSurfaceWaitChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// poke runs after the observation; when async it runs in a
		// goroutine 20 ms into the wait.
		poke  func(s *sim.Surface)
		async bool
		since func(seq uint64) uint64
		want  error
	}{
		{name: "quiet page waits for the deadline", want: context.DeadlineExceeded},
		{name: "pending change returns at once", poke: (*sim.Surface).Changed},
		{name: "change during the wait wakes it", poke: (*sim.Surface).Changed, async: true},
		{name: "crash during the wait wakes it", poke: (*sim.Surface).Crash, async: true, want: surface.ErrCrashed},
		{name: "close during the wait wakes it", poke: func(s *sim.Surface) { _ = s.Close() }, async: true, want: surface.ErrCrashed},
		{name: "unknown observation returns at once", since: func(seq uint64) uint64 { return seq + 100 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			s := sim.New(&countingApp{})
			snap := b.observe(t, s)
			since := snap.Seq
			if tc.since != nil {
				since = tc.since(since)
			}
			if tc.poke != nil && !tc.async {
				tc.poke(s)
			}
			if tc.poke != nil && tc.async {
				go func() {
					time.Sleep(20 * time.Millisecond)
					tc.poke(s)
				}()
			}
			// A missed wake-up waits out ctx (30 s); 10 s tells that
			// apart from a poke a loaded CI machine ran late.
			ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
			defer cancel()
			if tc.want == context.DeadlineExceeded {
				var c2 context.CancelFunc
				ctx, c2 = context.WithTimeout(ctx, 50*time.Millisecond)
				defer c2()
			}
			start := time.Now()
			err := s.WaitChange(ctx, since)
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Fatalf("WaitChange = %v, want %v", err, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("WaitChange took %s", d)
			}
		})
	}
}

func TestSurfaceCrash(t *testing.T) {
	t.Parallel()
	b := setup(t)
	app := &countingApp{}
	s := sim.New(app)
	snap := b.observe(t, s)
	n := snap.Nodes[1]
	click := b.authorize(t, domain.Action{Type: domain.ActClick}, &n, "")
	s.Crash()
	if _, err := s.Observe(b.ctx); !errors.Is(err, surface.ErrCrashed) {
		t.Errorf("Observe after Crash = %v", err)
	}
	if _, err := s.Dispatch(b.ctx, click); !errors.Is(err, surface.ErrCrashed) {
		t.Errorf("Dispatch after Crash = %v", err)
	}
	if err := s.WaitChange(b.ctx, snap.Seq); !errors.Is(err, surface.ErrCrashed) {
		t.Errorf("WaitChange after Crash = %v", err)
	}
	if got := surface.FailureCode(fmtErr(s.Observe(b.ctx))); got != domain.CodeSurfaceCrashed {
		t.Errorf("failure code %s, want SURFACE_CRASHED", got)
	}
	if app.handled != 0 {
		t.Error("a crashed surface reached the app")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after Crash: %v", err)
	}
}

func fmtErr(_ *domain.UiSnapshot, err error) error { return err }

func TestSurfaceDispatchResult(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fx := sim.NewFixture()
	s := sim.New(fx)
	res := b.must(t, s, domain.Action{Type: domain.ActNavigate, URL: fx.URL(sim.FixtureMain)}, "", "", "")
	if !res.Navigated || res.URL != fx.URL(sim.FixtureMain) {
		t.Errorf("navigate: %+v", res)
	}
	res = b.must(t, s, domain.Action{Type: domain.ActClick}, "button", "Greet", "")
	if res.Navigated || res.URL != fx.URL(sim.FixtureMain) {
		t.Errorf("click: %+v", res)
	}
	if _, err := b.act(t, s, domain.Action{Type: domain.ActClick}, "button", "Locked", ""); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("click on a disabled button: %v", err)
	}
	if got := len(s.Actions()); got != 2 {
		t.Errorf("%d actions reached the app, want 2 (the disabled click did not)", got)
	}
	// A 404 page for an unknown page.
	b.must(t, s, domain.Action{Type: domain.ActNavigate, URL: sim.FixtureBase + "/nowhere"}, "", "", "")
	if snap := b.observe(t, s); snap.HTTPStatus != 404 || snap.Title != "Not Found" {
		t.Errorf("unknown page: status %d title %q", snap.HTTPStatus, snap.Title)
	}
}

// flowBase is where test flows live.
const flowBase = "http://127.0.0.1/app"

func newFlow() *sim.Flow {
	return sim.NewFlow(flowBase,
		sim.Screen{Name: "form", Title: "Form", Nodes: []sim.Node{
			{Role: "heading", Name: "Transfer"},
			{Role: "textbox", Name: "Amount"},
			{Role: "textbox", Name: "PIN", Password: true},
			{Role: "combobox", Name: "Account", Value: "Savings", Options: []string{"Savings", "Checking"}},
			{Role: "button", Name: "Submit"},
			{Role: "button", Name: "Disabled", Disabled: true},
		}},
		sim.Screen{Name: "done", Nodes: []sim.Node{
			{Role: "heading", Name: "Done"},
			{Role: "cell", Name: "TRF-0001", Row: "Confirmation"},
			{Role: "cell", Name: "$25.00", Row: "Amount"},
			{Role: "button", Name: "Open", Frame: "side"},
		}},
		sim.Screen{Name: "ask", Dialog: &domain.Dialog{Type: "confirm", Message: "Really?"}, Nodes: []sim.Node{
			{Role: "heading", Name: "Ask"},
			{Role: "button", Name: "Go"},
		}},
	)
}

func TestFlow(t *testing.T) {
	t.Parallel()
	nav := func(url string) domain.Action { return domain.Action{Type: domain.ActNavigate, URL: url} }
	click := domain.Action{Type: domain.ActClick}
	typ := func(s string) domain.Action { return domain.Action{Type: domain.ActType, Value: domain.Lit(s)} }
	tests := []struct {
		name string
		run  func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface)
	}{
		{"base URL loads the first screen", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			res := b.must(t, s, nav(flowBase+"/"), "", "", "")
			if !res.Navigated || res.URL != f.URL("form") || f.Screen() != "form" {
				t.Fatalf("navigate: %+v on %s", res, f.Screen())
			}
			snap := b.observe(t, s)
			if snap.Title != "Form" || snap.URL != flowBase+"/form" {
				t.Errorf("title %q url %q", snap.Title, snap.URL)
			}
		}},
		{"a submitted screen is PostBacked and refuses a reload", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			f.On("button", "Submit", sim.Append("posted"), sim.Submit("done"))
			b.must(t, s, nav(f.URL("form")), "", "", "")
			if b.observe(t, s).PostBacked {
				t.Fatal("a navigated screen is PostBacked")
			}
			b.must(t, s, click, "button", "Submit", "")
			if snap := b.observe(t, s); !snap.PostBacked || f.Screen() != "done" {
				t.Fatalf("after the submit: PostBacked %v on %s", snap.PostBacked, f.Screen())
			}
			_, err := b.act(t, s, domain.Action{Type: domain.ActReload}, "", "", "")
			if !errors.Is(err, surface.ErrResubmit) {
				t.Fatalf("reload of a submitted screen: %v, want ErrResubmit", err)
			}
			if got := f.Ledger(); !slices.Equal(got, []string{"posted"}) {
				t.Errorf("ledger %q after a refused reload, want one post", got)
			}
			b.must(t, s, nav(f.URL("form")), "", "", "")
			if b.observe(t, s).PostBacked {
				t.Error("a GET after the submit is PostBacked")
			}
			b.must(t, s, domain.Action{Type: domain.ActReload}, "", "", "")
		}},
		{"a Goto after a submit (POST, 303, GET) is not PostBacked", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			f.On("button", "Submit", sim.Goto("done"))
			b.must(t, s, nav(f.URL("form")), "", "", "")
			b.must(t, s, click, "button", "Submit", "")
			if b.observe(t, s).PostBacked {
				t.Error("a Goto screen is PostBacked")
			}
		}},
		{"focus moves the key target and shows it", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			b.must(t, s, nav(f.URL("form")), "", "", "")
			b.must(t, s, domain.Action{Type: domain.ActFocus}, "button", "Submit", "")
			if n, _ := surfacetest.Find(b.observe(t, s), "button", "Submit", ""); !n.States.Focused {
				t.Fatalf("Submit is not Focused after focus: %+v", n.States)
			}
			if got := f.Count("button", "Submit"); got != 1 {
				t.Errorf("Submit handled %d actions, want the focus only", got)
			}
			b.must(t, s, typ("5"), "textbox", "Amount", "5")
			if n, _ := surfacetest.Find(b.observe(t, s), "button", "Submit", ""); n.States.Focused {
				t.Error("Submit still Focused after typing elsewhere")
			}
		}},
		{"click runs handlers in order and counts them", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			f.On("button", "Submit",
				func(ev *sim.Event) error { ev.Append("amount=" + ev.Value("textbox", "Amount")); return nil },
				sim.Nth(1, sim.Fail("first submit fails")),
				sim.From(2, sim.Append("posted"), sim.Goto("done")))
			b.must(t, s, nav(f.URL("form")), "", "", "")
			b.must(t, s, typ("10"), "textbox", "Amount", "10")
			b.must(t, s, typ("25"), "textbox", "Amount", "25")
			if _, err := b.act(t, s, click, "button", "Submit", ""); err == nil || !strings.Contains(err.Error(), "first submit fails") {
				t.Fatalf("first submit: %v", err)
			}
			res := b.must(t, s, click, "button", "Submit", "")
			if !res.Navigated || f.Screen() != "done" {
				t.Errorf("second submit: %+v on %s", res, f.Screen())
			}
			if got, want := f.Ledger(), []string{"amount=25", "amount=25", "posted"}; !slices.Equal(got, want) {
				t.Errorf("ledger %q, want %q", got, want)
			}
			if f.Count("button", "Submit") != 2 || f.Count("textbox", "Amount") != 2 {
				t.Errorf("counts: Submit %d Amount %d", f.Count("button", "Submit"), f.Count("textbox", "Amount"))
			}
		}},
		{"row labels resolve with row_of; frames carry their path", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			b.must(t, s, nav(f.URL("done")), "", "", "")
			snap := b.observe(t, s)
			for label, want := range map[string]string{"Confirmation": "TRF-0001", "Amount": "$25.00"} {
				res, err := targeting.Resolve(snap, domain.TargetDescriptor{Role: "cell", Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: label}})
				if err != nil {
					t.Fatalf("row_of %s: %v\n%s", label, err, surfacetest.Dump(snap))
				}
				if got := targeting.ExtractText(snap, res); got != want {
					t.Errorf("row_of %s = %q, want %q", label, got, want)
				}
			}
			if _, ok := surfacetest.Find(snap, "button", "Open", "side"); !ok || snap.Frame("side") == nil {
				t.Errorf("no Open button in frame side:\n%s", surfacetest.Dump(snap))
			}
		}},
		{"type, select and secrets", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			b.must(t, s, nav(f.URL("form")), "", "", "")
			snap := b.observe(t, s)
			pin, _ := surfacetest.Find(snap, "textbox", "PIN", "")
			a, err := b.authorize(t, domain.Action{Type: domain.ActType, Value: &domain.ValueExpr{Secret: "pin"}}, &pin, "").BindSecret("4321")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Dispatch(b.ctx, a); err != nil {
				t.Fatal(err)
			}
			if _, err := b.act(t, s, domain.Action{Type: domain.ActSelect, Value: domain.Lit("Brokerage")}, "combobox", "Account", "Brokerage"); err == nil || !strings.Contains(err.Error(), "Brokerage") {
				t.Errorf("unknown option: %v", err)
			}
			b.must(t, s, domain.Action{Type: domain.ActSelect, Value: domain.Lit("Checking")}, "combobox", "Account", "Checking")
			snap = b.observe(t, s)
			if n, _ := surfacetest.Find(snap, "combobox", "Account", ""); n.Value != "Checking" {
				t.Errorf("Account = %q", n.Value)
			}
			if n, _ := surfacetest.Find(snap, "textbox", "PIN", ""); n.Value != "••••" || !n.States.Password || !n.Sensitive {
				t.Errorf("PIN renders %q (password %v)", n.Value, n.States.Password)
			}
			if !slices.ContainsFunc(f.Handled(), func(h sim.Handled) bool { return h.Name == "PIN" && h.Text == "4321" }) {
				t.Errorf("the app did not receive the secret: %+v", f.Handled())
			}
			if _, err := b.act(t, s, click, "button", "Disabled", ""); err == nil {
				t.Error("a disabled button was clicked")
			}
		}},
		{"reload resets values and faults; OnLoad counts loads", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			f.OnLoad("form", sim.Nth(1, sim.Fault(502)))
			b.must(t, s, nav(f.URL("form")), "", "", "")
			snap := b.observe(t, s)
			if snap.HTTPStatus != 502 || snap.URL != f.URL("form") {
				t.Fatalf("first load: status %d url %s", snap.HTTPStatus, snap.URL)
			}
			b.must(t, s, domain.Action{Type: domain.ActReload}, "", "", "")
			b.must(t, s, typ("5"), "textbox", "Amount", "5")
			stale := b.observe(t, s)
			b.must(t, s, domain.Action{Type: domain.ActReload}, "", "", "")
			snap = b.observe(t, s)
			if n, ok := surfacetest.Find(snap, "textbox", "Amount", ""); !ok || n.Value != "" || snap.HTTPStatus != 0 {
				t.Errorf("after reload: Amount %q status %d", n.Value, snap.HTTPStatus)
			}
			old, _ := surfacetest.Find(stale, "button", "Submit", "")
			if _, err := s.Dispatch(b.ctx, b.authorize(t, click, &old, "")); !errors.Is(err, surface.ErrStale) {
				t.Errorf("node of the page before reload: %v, want ErrStale", err)
			}
		}},
		{"dialog blocks the page until answered", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			f.On("button", "Cancel", sim.Append("cancelled"))
			b.must(t, s, nav(f.URL("ask")), "", "", "")
			snap := b.observe(t, s)
			if snap.Dialog == nil || snap.Dialog.Message != "Really?" {
				t.Fatalf("dialog %+v", snap.Dialog)
			}
			if _, ok := surfacetest.Find(snap, "alertdialog", "Really?", ""); !ok {
				t.Fatal("no alertdialog node")
			}
			if _, err := b.act(t, s, click, "button", "Go", ""); err == nil {
				t.Error("clicked under an open dialog")
			}
			b.must(t, s, click, "button", "Cancel", "")
			if snap := b.observe(t, s); snap.Dialog != nil || !slices.Equal(f.Ledger(), []string{"cancelled"}) {
				t.Errorf("after Cancel: dialog %+v ledger %q", snap.Dialog, f.Ledger())
			}
			b.must(t, s, click, "button", "Go", "")
		}},
		{"push changes the page outside any action", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			b.must(t, s, nav(f.URL("form")), "", "", "")
			snap := b.observe(t, s)
			if err := f.Push(sim.Fault(503)); err != nil {
				t.Fatal(err)
			}
			s.Changed()
			if err := s.WaitChange(b.ctx, snap.Seq); err != nil {
				t.Fatal(err)
			}
			if snap := b.observe(t, s); snap.HTTPStatus != 503 {
				t.Errorf("status %d after the push", snap.HTTPStatus)
			}
			if err := f.Push(sim.Goto("nowhere")); err == nil {
				t.Error("Goto of an unknown screen succeeded")
			}
		}},
		{"unknown URL is a 404 page", func(t *testing.T, b *testBundle, f *sim.Flow, s *sim.Surface) {
			b.must(t, s, nav(flowBase+"/nowhere"), "", "", "")
			if snap := b.observe(t, s); snap.HTTPStatus != 404 || f.Screen() != "404" {
				t.Errorf("status %d screen %s", snap.HTTPStatus, f.Screen())
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			f := newFlow()
			s := sim.New(f)
			t.Cleanup(func() { _ = s.Close() })
			tc.run(t, b, f, s)
		})
	}
}
