package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface/sim"
)

func TestNew(t *testing.T) {
	t.Parallel()
	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"app.test"}})
	if err != nil {
		t.Fatal(err)
	}
	full := func() runtime.Config {
		return runtime.Config{Surface: sim.New(newLoginApp()), Policy: pol, Lease: hitl.NewLease("automation"), Holder: "automation", Redactor: redact.New()}
	}
	tests := []struct {
		name     string
		cfg      func() runtime.Config
		wantErr  bool
		wantCode domain.FailureCode
	}{
		{"minimal", full, false, ""},
		{"no holder: never act as whoever holds the lease", func() runtime.Config { c := full(); c.Holder = ""; return c }, true, domain.CodeInternal},
		{"holder matches", func() runtime.Config { c := full(); c.Holder = "automation"; return c }, false, ""},
		{"no surface", func() runtime.Config { c := full(); c.Surface = nil; return c }, true, domain.CodeInternal},
		{"no policy", func() runtime.Config { c := full(); c.Policy = nil; return c }, true, domain.CodeInternal},
		{"no lease", func() runtime.Config { c := full(); c.Lease = nil; return c }, true, domain.CodeInternal},
		{"no redactor", func() runtime.Config { c := full(); c.Redactor = nil; return c }, true, domain.CodeInternal},
		{"holder does not hold the lease", func() runtime.Config { c := full(); c.Holder = "human"; return c }, true, domain.CodeLeaseLost},
		{
			"holder got the lease back",
			func() runtime.Config {
				c := full()
				c.Lease.Transfer("human")
				c.Lease.Transfer("automation")
				c.Holder = "automation"
				return c
			},
			false, "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := runtime.New(tt.cfg())
			if tt.wantErr {
				if err == nil {
					t.Fatal("New succeeded, want an error")
				}
				wantCode(t, err, tt.wantCode)
				if d != nil {
					t.Error("New returned a dispatcher with its error")
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if d.Dispatches() != 0 {
				t.Errorf("Dispatches() = %d on a new dispatcher", d.Dispatches())
			}
		})
	}
}

func TestActTypesSecretAtDispatch(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	snap := b.observe(t)
	if n := b.secrets.callCount(); n != 0 {
		t.Fatalf("secret fetched %d times before any action", n)
	}
	if got := b.red.String(plaintext); got != plaintext {
		t.Fatalf("the redactor knew the secret before dispatch: %q", got)
	}

	res, err := b.d.Act(t.Context(), snap, typeSecret(), "ignored for a secret")
	if err != nil {
		t.Fatalf("Act: %v", err)
	}
	if got := b.secrets.calls; !slices.Equal(got, []string{secretRef}) {
		t.Errorf("secret calls = %q, want exactly one for %q", got, secretRef)
	}
	if len(b.app.got) != 1 || b.app.got[0].text != plaintext || b.app.got[0].secret != secretRef || !strings.HasSuffix(b.app.got[0].ref, ":pw") {
		t.Fatalf("app received %+v, want the plaintext typed into Password", b.app.got)
	}
	if b.app.password != plaintext {
		t.Errorf("app password = %q", b.app.password)
	}
	if res.Node == nil || res.Node.Name != "Password" || res.Risk != domain.RiskSafe {
		t.Errorf("result node=%+v risk=%q", res.Node, res.Risk)
	}
	if got := b.red.String("typed " + plaintext); got != "typed "+redact.Marker {
		t.Errorf("the secret was not registered with the redactor: %q", got)
	}

	ev := b.events.last(t, "action_dispatched")
	if got := ev.Payload.(evidence.ActionDispatched).Value; got != "{$secret: "+secretRef+"}" {
		t.Errorf("event value = %v, want the reference only", got)
	}
	mem, err := json.Marshal(b.events.events)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mem), plaintext) {
		t.Errorf("an event handed to the sink carries the plaintext:\n%s", mem)
	}
	log := b.eventLog(t)
	if strings.Contains(log, plaintext) {
		t.Errorf("events.jsonl carries the plaintext:\n%s", log)
	}
	if !strings.Contains(log, `{$secret: `+secretRef+`}`) {
		t.Errorf("events.jsonl lost the secret reference:\n%s", log)
	}
}

func TestActFetchesSecretEveryDispatch(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	for i := range 3 {
		if _, err := b.d.Act(t.Context(), b.observe(t), typeSecret(), ""); err != nil {
			t.Fatalf("Act #%d: %v", i+1, err)
		}
	}
	if n := b.secrets.callCount(); n != 3 {
		t.Errorf("secret fetched %d times for 3 dispatches", n)
	}
	if b.d.Dispatches() != 3 {
		t.Errorf("Dispatches() = %d, want 3", b.d.Dispatches())
	}
}

func TestActRefusedBeforeDispatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		opts         setupOpts
		prepare      func(b *testBundle)
		action       domain.Action
		wantCode     domain.FailureCode
		wantEvent    string
		wantDenied   bool
		wantSecretOK bool // the secret may have been fetched (lease moved after)
	}{
		{
			name:    "lease transferred away",
			prepare: func(b *testBundle) { b.lease.Transfer("human") },
			action:  clickGo(), wantCode: domain.CodeLeaseLost, wantEvent: "dispatch_refused",
		},
		{
			name:    "lease back with the same holder at a new epoch",
			prepare: func(b *testBundle) { b.lease.Transfer("human"); b.lease.Transfer("automation") },
			action:  typeSecret(), wantCode: domain.CodeLeaseLost, wantEvent: "dispatch_refused",
		},
		{
			name:    "lease re-granted to the same holder",
			prepare: func(b *testBundle) { b.lease.Transfer("automation") },
			action:  clickGo(), wantCode: domain.CodeLeaseLost, wantEvent: "dispatch_refused",
		},
		{
			name: "lease moved while the secret was fetched",
			prepare: func(b *testBundle) {
				b.secrets.hook = func() { b.lease.Transfer("human") }
			},
			action: typeSecret(), wantCode: domain.CodeLeaseLost, wantEvent: "dispatch_refused", wantSecretOK: true,
		},
		{
			name:     "undeclared irreversible control",
			action:   domain.Action{Type: domain.ActClick, StepID: "del", Target: target("button", "Delete account")},
			wantCode: domain.CodePolicyDenied, wantEvent: "policy_denied", wantDenied: true,
		},
		{
			name:     "irreversible without approval",
			action:   domain.Action{Type: domain.ActClick, StepID: "del", Target: target("button", "Delete account"), Risk: domain.RiskIrreversible},
			wantCode: domain.CodeApprovalRequired, wantEvent: "policy_denied", wantDenied: true,
		},
		{
			name:     "navigate off the allowlist",
			action:   domain.Action{Type: domain.ActNavigate, URL: "https://evil.example/"},
			wantCode: domain.CodeDomainNotAllowed, wantEvent: "policy_denied", wantDenied: true,
		},
		{
			name:     "navigate with a userinfo trick",
			action:   domain.Action{Type: domain.ActNavigate, URL: "http://app.test@evil.example/"},
			wantCode: domain.CodeDomainNotAllowed, wantEvent: "policy_denied", wantDenied: true,
		},
		{
			name:     "javascript URL",
			action:   domain.Action{Type: domain.ActNavigate, URL: "javascript:alert(1)"},
			wantCode: domain.CodeDomainNotAllowed, wantEvent: "policy_denied", wantDenied: true,
		},
		{
			name:   "action outside allowed_actions",
			opts:   setupOpts{allowed: []domain.ActionType{domain.ActClick}},
			action: typeSecret(), wantCode: domain.CodePolicyDenied, wantEvent: "policy_denied", wantDenied: true,
		},
		{
			name:   "human typing a secret",
			opts:   setupOpts{profile: policy.ProfileHuman, actor: domain.ActorHuman},
			action: typeSecret(), wantCode: domain.CodePolicyDenied, wantEvent: "policy_denied", wantDenied: true,
		},
		{
			name:     "target not found",
			action:   domain.Action{Type: domain.ActClick, StepID: "x", Target: target("button", "Nope")},
			wantCode: domain.CodeTargetNotFound, wantEvent: "target_unresolved",
		},
		{
			name:     "role does not match",
			action:   domain.Action{Type: domain.ActClick, StepID: "x", Target: target("link", "Go")},
			wantCode: domain.CodeTargetNotFound, wantEvent: "target_unresolved",
		},
		{
			name:     "ambiguous target",
			action:   domain.Action{Type: domain.ActClick, StepID: "x", Target: target("link", "More")},
			wantCode: domain.CodeTargetAmbiguous, wantEvent: "target_unresolved",
		},
		{
			name:     "click without a target",
			action:   domain.Action{Type: domain.ActClick, StepID: "x"},
			wantCode: domain.CodePolicyDenied, wantEvent: "policy_denied", wantDenied: true,
		},
		{
			name:     "missing secret",
			action:   domain.Action{Type: domain.ActType, StepID: "pw", Target: target("textbox", "Password"), Value: &domain.ValueExpr{Secret: "nope"}},
			wantCode: domain.CodeSecretUnavailable, wantSecretOK: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.opts)
			snap := b.observe(t)
			if tt.prepare != nil {
				tt.prepare(b)
			}
			_, err := b.d.Act(t.Context(), snap, tt.action, "")
			wantCode(t, err, tt.wantCode)
			if got := policy.IsDenied(err); got != tt.wantDenied {
				t.Errorf("IsDenied = %v, want %v (%v)", got, tt.wantDenied, err)
			}
			if len(b.app.got) != 0 {
				t.Errorf("the app received %+v", b.app.got)
			}
			if b.d.Dispatches() != 0 {
				t.Errorf("Dispatches() = %d, want 0", b.d.Dispatches())
			}
			if n := b.secrets.callCount(); n != 0 && !tt.wantSecretOK {
				t.Errorf("secret fetched %d times for an action refused before dispatch", n)
			}
			types := b.events.types()
			if slices.Contains(types, "action_dispatched") {
				t.Errorf("events %q include action_dispatched", types)
			}
			if tt.wantEvent != "" {
				ev := b.events.last(t, tt.wantEvent)
				if ev.StepID != tt.action.StepID {
					t.Errorf("%s event step = %q, want %q", tt.wantEvent, ev.StepID, tt.action.StepID)
				}
				if pd, ok := ev.Payload.(evidence.PolicyDenied); tt.wantEvent == "policy_denied" && (!ok || pd.Action != tt.action.Type) {
					t.Errorf("policy_denied data = %+v", ev.Payload)
				}
			}
			if log := b.eventLog(t); strings.Contains(log, plaintext) {
				t.Errorf("events.jsonl carries the plaintext:\n%s", log)
			}
		})
	}
}

func TestActWithoutSecretSource(t *testing.T) {
	t.Parallel()
	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"app.test"}})
	if err != nil {
		t.Fatal(err)
	}
	app := newLoginApp()
	d, err := runtime.New(runtime.Config{Surface: sim.New(app), Policy: pol, Lease: hitl.NewLease("a"), Holder: "a", Redactor: redact.New()})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Act(t.Context(), snap, typeSecret(), "")
	wantCode(t, err, domain.CodeSecretUnavailable)
	if len(app.got) != 0 || d.Dispatches() != 0 {
		t.Errorf("app received %+v, Dispatches() = %d", app.got, d.Dispatches())
	}
	// Without a sink, a plain action still works.
	if _, err := d.Act(t.Context(), snap, clickGo(), ""); err != nil {
		t.Fatalf("Act without an event sink: %v", err)
	}
}

func TestActResultAndEvents(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	snap := b.observe(t)

	if _, err := b.d.Act(t.Context(), snap, typeSecret(), ""); err != nil {
		t.Fatal(err)
	}
	_, err := b.d.Act(t.Context(), snap, domain.Action{Type: domain.ActClick, StepID: "del", Target: target("button", "Delete account")}, "")
	wantCode(t, err, domain.CodePolicyDenied)
	res, err := b.d.Act(t.Context(), snap, clickGo(), "")
	if err != nil {
		t.Fatal(err)
	}

	if b.d.Dispatches() != 2 {
		t.Errorf("Dispatches() = %d, want 2 (one was denied)", b.d.Dispatches())
	}
	if res.Resolution == nil || res.Resolution.Strategy != domain.StrategySemanticExact || res.Node == nil || res.Node.Name != "Go" {
		t.Errorf("result resolution=%+v node=%+v", res.Resolution, res.Node)
	}
	if !res.Surface.Navigated || res.Surface.URL != base+"/home" || res.Risk != domain.RiskSafe {
		t.Errorf("result surface=%+v risk=%q", res.Surface, res.Risk)
	}
	if got, want := b.events.types(), []string{"action_dispatched", "policy_denied", "action_dispatched"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	ev := b.events.last(t, "action_dispatched")
	want := evidence.ActionDispatched{
		Action: "click", Risk: "safe", DurationMS: 0, Epoch: 1,
		Role: "button", Name: "Go", Frame: "", Strategy: "semantic_exact",
	}
	if got := ev.Payload.(evidence.ActionDispatched); got != want {
		t.Errorf("event data = %+v, want %+v", got, want)
	}
	if ev.StepID != "go" || ev.Actor != domain.ActorAutomation || ev.At != "2026-01-02T03:04:05Z" {
		t.Errorf("event step=%q actor=%q at=%q", ev.StepID, ev.Actor, ev.At)
	}
	if v := ev.Payload.(evidence.ActionDispatched).Value; v != "" {
		t.Errorf("a click carries a value: %v", v)
	}
}

func TestActNavigate(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	res, err := b.d.Act(t.Context(), b.observe(t), domain.Action{Type: domain.ActNavigate, StepID: "open", URL: base + "/login?again=1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Surface.Navigated || res.Node != nil || res.Resolution != nil {
		t.Errorf("result = %+v", res)
	}
	if len(b.app.got) != 1 || b.app.got[0].url != base+"/login?again=1" {
		t.Errorf("app received %+v", b.app.got)
	}
	if ev := b.events.last(t, "action_dispatched"); ev.Payload.(evidence.ActionDispatched).URL != base+"/login?again=1" {
		t.Errorf("event data = %+v", ev.Payload)
	}
}

func TestActActorIsTheDispatchers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    setupOpts
		claimed domain.Actor
		want    domain.Actor
	}{
		{"default is automation", setupOpts{}, "", domain.ActorAutomation},
		{"an action cannot claim to be human", setupOpts{}, domain.ActorHuman, domain.ActorAutomation},
		{"human dispatcher", setupOpts{profile: policy.ProfileHuman, actor: domain.ActorHuman}, domain.ActorAutomation, domain.ActorHuman},
		{"agent dispatcher", setupOpts{profile: policy.ProfileDiscovery, actor: domain.ActorAgent}, "", domain.ActorAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.opts)
			a := clickGo()
			a.Actor = tt.claimed
			if _, err := b.d.Act(t.Context(), b.observe(t), a, ""); err != nil {
				t.Fatal(err)
			}
			if len(b.app.got) != 1 || b.app.got[0].actor != tt.want {
				t.Errorf("app received %+v, want actor %q", b.app.got, tt.want)
			}
			if ev := b.events.last(t, "action_dispatched"); ev.Actor != tt.want {
				t.Errorf("event actor = %q, want %q", ev.Actor, tt.want)
			}
		})
	}
}

func TestActStaleSnapshot(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	old := b.observe(t)
	if _, err := b.d.Act(t.Context(), old, clickGo(), ""); err != nil {
		t.Fatal(err)
	}
	// "Go" resolves on the old snapshot, but its node is gone from the page.
	_, err := b.d.Act(t.Context(), old, clickGo(), "")
	wantCode(t, err, domain.CodeTargetNotFound)
	if len(b.app.got) != 1 {
		t.Errorf("app received %d actions, want 1", len(b.app.got))
	}
	if ev := b.events.last(t, "dispatch_failed"); ev.Payload.(evidence.DispatchFailed).Error == "" {
		t.Errorf("dispatch_failed data = %+v", ev.Payload)
	}
}

func TestObserveLandingAllowlist(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		app     func(*loginApp)
		wantErr bool
	}{
		{"allowed", nil, false},
		{"page off the allowlist", func(a *loginApp) { a.url = "https://evil.example/login" }, true},
		{"userinfo trick", func(a *loginApp) { a.url = "http://app.test@evil.example/login" }, true},
		{"file URL", func(a *loginApp) { a.url = "file:///etc/login" }, true},
		{"frame off the allowlist", func(a *loginApp) { a.frameURL = "https://ads.evil.example/" }, true},
		{"frame on the allowlist", func(a *loginApp) { a.frameURL = base + "/ads" }, false},
		{"about:blank frame", func(a *loginApp) { a.frameURL = "about:blank" }, false},
		{"about:srcdoc frame", func(a *loginApp) { a.frameURL = "about:srcdoc" }, false},
		{"about:blank page", func(a *loginApp) { a.url = "about:blank" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpts{app: tt.app})
			snap, err := b.d.Observe(t.Context())
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Observe: %v", err)
				}
				if slices.Contains(b.events.types(), "landing_refused") {
					t.Error("landing_refused emitted for an allowed page")
				}
				return
			}
			wantCode(t, err, domain.CodeDomainNotAllowed)
			if snap == nil {
				t.Error("a refused landing returned no snapshot to report")
			}
			ev := b.events.last(t, "landing_refused")
			if ev.Payload.(evidence.LandingRefused).URL != b.app.url {
				t.Errorf("landing_refused data = %+v", ev.Payload)
			}
			// A refused landing is not cached as good.
			_, err = b.d.Observe(t.Context())
			wantCode(t, err, domain.CodeDomainNotAllowed)
		})
	}
}

func TestObserveRefusesLandingAfterDispatch(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{app: func(a *loginApp) { a.landURL = "https://phish.example/home" }})
	if _, err := b.d.Act(t.Context(), b.observe(t), clickGo(), ""); err != nil {
		t.Fatal(err)
	}
	_, err := b.d.Observe(t.Context())
	wantCode(t, err, domain.CodeDomainNotAllowed)
}

func TestObserveCache(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s1 := b.observe(t)
	if s2 := b.observe(t); s2 != s1 {
		t.Fatalf("nothing changed but Observe returned a new snapshot (seq %d, then %d)", s1.Seq, s2.Seq)
	}

	// A denied action dispatches nothing: the snapshot still holds.
	_, err := b.d.Act(t.Context(), s1, domain.Action{Type: domain.ActClick, Target: target("button", "Delete account")}, "")
	wantCode(t, err, domain.CodePolicyDenied)
	if s := b.observe(t); s != s1 {
		t.Error("a denied action invalidated the snapshot")
	}

	if _, err := b.d.Act(t.Context(), s1, clickGo(), ""); err != nil {
		t.Fatal(err)
	}
	s3 := b.observe(t)
	if s3 == s1 || s3.Seq <= s1.Seq {
		t.Fatalf("after a dispatch Observe served the old snapshot (seq %d, then %d)", s1.Seq, s3.Seq)
	}
	if s3.URL != base+"/home" {
		t.Errorf("fresh snapshot URL = %q", s3.URL)
	}
	if s4 := b.observe(t); s4 != s3 {
		t.Error("the fresh snapshot is not cached in turn")
	}

	b.surf.Changed()
	if s5 := b.observe(t); s5 == s3 || s5.Seq <= s3.Seq {
		t.Error("after the app changed on its own Observe served the old snapshot")
	}
}

func TestObserveAfterDispatchEvenWithoutChange(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s1 := b.observe(t)
	// Pressing a key the app ignores still counts as a dispatch.
	if _, err := b.d.Act(t.Context(), s1, domain.Action{Type: domain.ActPressKey, Key: "Shift"}, ""); err != nil {
		t.Fatal(err)
	}
	if s2 := b.observe(t); s2 == s1 {
		t.Error("Observe served the snapshot taken before a dispatch")
	}
}

func TestObserveErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(*testBundle) context.Context
		want    domain.FailureCode
	}{
		{
			"crashed surface is not served from cache",
			func(b *testBundle) context.Context { b.surf.Crash(); return context.Background() },
			domain.CodeSurfaceCrashed,
		},
		{
			"closed surface",
			func(b *testBundle) context.Context { _ = b.surf.Close(); return context.Background() },
			domain.CodeSurfaceCrashed,
		},
		{
			"canceled context is not served from cache",
			func(*testBundle) context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			domain.CodeCanceled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpts{})
			b.observe(t) // warm the cache
			ctx := tt.breakIt(b)
			_, err := b.d.Observe(ctx)
			wantCode(t, err, tt.want)
		})
	}
}

func TestWaitChange(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.observe(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.d.WaitChange(ctx, s.Seq); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitChange with nothing pending = %v, want context.Canceled", err)
	}
	b.surf.Changed()
	if err := b.d.WaitChange(t.Context(), s.Seq); err != nil {
		t.Errorf("WaitChange after a change = %v", err)
	}
}

func TestEmit(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	b.red.RegisterLiteral(plaintext)
	b.d.Emit("login", evidence.InputRefused{Error: "using " + plaintext})
	ev := b.events.last(t, "input_refused")
	if ev.StepID != "login" || ev.Actor != domain.ActorAutomation {
		t.Errorf("event = %+v", ev)
	}
	if log := b.eventLog(t); strings.Contains(log, plaintext) || !strings.Contains(log, "input_refused") {
		t.Errorf("events.jsonl:\n%s", log)
	}
}

func TestWaitChangeWrapsSurfaceFailures(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.observe(t)
	b.surf.Crash()
	err := b.d.WaitChange(t.Context(), s.Seq)
	wantCode(t, err, domain.CodeSurfaceCrashed)
}

func TestSecretLog(t *testing.T) {
	t.Parallel()
	var nilLog *runtime.SecretLog
	if nilLog.Reveals(plaintext) {
		t.Error("a nil SecretLog reveals")
	}

	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"app.test"}})
	if err != nil {
		t.Fatal(err)
	}
	log := &runtime.SecretLog{}
	src := &secrets{values: map[string]string{secretRef: plaintext}}
	d, err := runtime.New(runtime.Config{
		Surface: sim.New(newLoginApp()), Policy: pol, Lease: hitl.NewLease("a"), Holder: "a", Redactor: redact.New(),
		Secrets: src, SecretLog: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if log.Reveals("balance " + plaintext) {
		t.Fatal("the log knew the secret before dispatch")
	}
	if _, err := d.Act(t.Context(), snap, typeSecret(), ""); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
		want bool
	}{
		{"exact", plaintext, true},
		{"inside text", "Your password is " + plaintext + ".", true},
		{"other text", "balance 1,200.00", false},
		{"prefix only", plaintext[:5], false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := log.Reveals(tt.text); got != tt.want {
				t.Errorf("Reveals(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}
