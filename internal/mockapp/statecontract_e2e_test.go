package mockapp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/state"
	"github.com/cuahq/cua/internal/targeting"
)

// e2eBundle is a real MemberDesk server, a state surface on its automation
// contract and the AUTOMATION policy.
type e2eBundle struct {
	srv *mockapp.Server
	s   *state.Surface
	pol *policy.Engine
	ctx context.Context
}

func setupE2E(t *testing.T, opts mockapp.Options) *e2eBundle {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	srv, err := mockapp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	s, err := state.New(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // only a hang meets it
	t.Cleanup(cancel)
	return &e2eBundle{srv: srv, s: s, pol: pol, ctx: ctx}
}

// observe reads and normalises a snapshot, as the runtime does.
func (b *e2eBundle) observe(t *testing.T) *domain.UiSnapshot {
	t.Helper()
	raw, err := b.s.Observe(b.ctx)
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	return perception.Normalize(raw)
}

// until observes, waiting for changes, until pred holds.
func (b *e2eBundle) until(t *testing.T, what string, pred func(*domain.UiSnapshot) bool) *domain.UiSnapshot {
	t.Helper()
	for {
		snap := b.observe(t)
		if pred(snap) {
			return snap
		}
		if err := b.s.WaitChange(b.ctx, snap.Seq); err != nil {
			t.Fatalf("waiting for %s: %v\n%s", what, err, perception.ElementList(snap, perception.ListOptions{}).Text)
		}
	}
}

func desc(role, name, frame string) domain.TargetDescriptor {
	return domain.TargetDescriptor{Role: role, Name: &domain.NameMatch{Value: name, Match: domain.MatchExact}, Scope: &domain.Scope{Frame: frame}}
}

// act resolves d on snap, has policy authorize the action (binding secret
// when the value is a secret reference) and dispatches it.
func (b *e2eBundle) act(t *testing.T, snap *domain.UiSnapshot, d *domain.TargetDescriptor, a domain.Action, text, secret string) surface.Result {
	t.Helper()
	var node *domain.Node
	if d != nil {
		r, err := targeting.Resolve(snap, *d)
		if err != nil {
			t.Fatalf("resolve %s: %v", targeting.Describe(*d), err)
		}
		n := snap.Nodes[r.Node]
		node = &n
	}
	a.Actor = domain.ActorAutomation
	aa, err := b.pol.Authorize(policy.Request{Action: a, Node: node, Text: text})
	if err != nil {
		t.Fatalf("authorize %s: %v", a.Type, err)
	}
	if aa.NeedsSecret() {
		if aa, err = aa.BindSecret(secret); err != nil {
			t.Fatal(err)
		}
	}
	res, err := b.s.Dispatch(b.ctx, aa)
	if err != nil {
		t.Fatalf("dispatch %s: %v", a.Type, err)
	}
	return res
}

func headingIs(name string) func(*domain.UiSnapshot) bool {
	return func(s *domain.UiSnapshot) bool {
		_, err := targeting.Resolve(s, desc("heading", name, "content"))
		return err == nil
	}
}

func TestStateSurfaceDrivesMemberDesk(t *testing.T) {
	t.Parallel()
	b := setupE2E(t, mockapp.Options{})
	snap := b.observe(t)
	if snap.URL != b.srv.URL()+"/" || len(snap.Frames) != 3 {
		t.Fatalf("first snapshot: url %s frames %+v", snap.URL, snap.Frames)
	}
	start := b.s.ProgressKey()

	op, pw := desc("textbox", "Operator ID", "content"), desc("textbox", "Password", "content")
	b.act(t, snap, &op, domain.Action{Type: domain.ActType, Value: &domain.ValueExpr{Secret: "corebank_operator"}}, "", mockapp.DefaultOperator)
	b.act(t, snap, &pw, domain.Action{Type: domain.ActType, Value: &domain.ValueExpr{Secret: "corebank_password"}}, "", mockapp.DefaultPassword)
	signOn := desc("button", "Sign on", "content")
	b.act(t, b.observe(t), &signOn, domain.Action{Type: domain.ActClick}, "", "")
	snap = b.until(t, "Welcome", headingIs("Welcome"))
	if b.s.AppState()["signed_on"] != true {
		t.Errorf("app_state after sign on: %v", b.s.AppState())
	}

	memberSearch := desc("link", "Member Search", "nav")
	if res := b.act(t, snap, &memberSearch, domain.Action{Type: domain.ActClick}, "", ""); !res.Navigated {
		t.Error("the Member Search link did not navigate")
	}
	snap = b.until(t, "Member Search", headingIs("Member Search"))
	number := desc("textbox", "Member number", "content")
	b.act(t, snap, &number, domain.Action{Type: domain.ActType, Value: domain.Lit("12345")}, "12345", "")
	// "Search" is also the decoy button of nav: the scope decides.
	search := desc("button", "Search", "content")
	b.act(t, b.observe(t), &search, domain.Action{Type: domain.ActClick}, "", "")
	snap = b.until(t, "Member Details", headingIs("Member Details"))

	for _, tc := range []struct {
		d    domain.TargetDescriptor
		want string
	}{
		{domain.TargetDescriptor{Role: "cell", Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: "Savings Balance"}, Scope: &domain.Scope{Frame: "content"}}, "$1,234.56"},
		{domain.TargetDescriptor{Role: "cell", Anchor: &domain.Anchor{Relation: domain.RelWithinSection, Text: "Status"}, Scope: &domain.Scope{Frame: "content"}, Ordinal: ptr(2)}, "Active"},
		{domain.TargetDescriptor{Role: "cell", Scope: &domain.Scope{Frame: "content", Region: "As of"}, Ordinal: ptr(2)}, "11/30/2026"},
	} {
		r, err := targeting.Resolve(snap, tc.d)
		if err != nil {
			t.Errorf("resolve %s: %v", targeting.Describe(tc.d), err)
			continue
		}
		if got := targeting.ExtractText(snap, r); got != tc.want {
			t.Errorf("%s = %q, want %q", targeting.Describe(tc.d), got, tc.want)
		}
	}

	list := perception.ElementList(snap, perception.ListOptions{})
	t.Logf("element list of the member page:\n%s", list.Text)
	for _, line := range []string{
		`link "Member Search" frame=nav`,
		`button "Search" frame=nav`,
		`heading "Member Details" frame=content`,
		`cell "$1,234.56" frame=content region="Savings Balance"`,
	} {
		if !strings.Contains(list.Text, line) {
			t.Errorf("element list lacks %q", line)
		}
	}

	app := b.s.AppState()
	if app["screen"] != "member" || app["member"] != "12345" {
		t.Errorf("app_state = %v", app)
	}
	if key := b.s.ProgressKey(); key == start || !strings.Contains(key, `"screen":"member"`) {
		t.Errorf("progress key = %s (start %s)", key, start)
	}
	raw, _ := json.Marshal(snap)
	for _, leak := range []string{"signed_on", mockapp.DefaultPassword} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("the snapshot holds %q", leak)
		}
	}
}

func ptr(i int) *int { return &i }

func TestStateSurfaceStaleAndGateway(t *testing.T) {
	t.Parallel()
	b := setupE2E(t, mockapp.Options{})
	snap := b.observe(t)
	signOn := desc("button", "Sign on", "content")
	r, err := targeting.Resolve(snap, signOn)
	if err != nil {
		t.Fatal(err)
	}
	old := snap.Nodes[r.Node]
	b.act(t, snap, nil, domain.Action{Type: domain.ActReload}, "", "")
	aa, err := b.pol.Authorize(policy.Request{Action: domain.Action{Type: domain.ActClick, Actor: domain.ActorAutomation}, Node: &old})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.Dispatch(b.ctx, aa); !errors.Is(err, surface.ErrStale) {
		t.Errorf("a control of the replaced page: %v, want ErrStale", err)
	}

	arm(t, b.srv.URL(), mockapp.FaultTransientLoad, 1)
	res := b.act(t, b.observe(t), nil, domain.Action{Type: domain.ActNavigate, URL: b.srv.URL() + "/"}, "", "")
	if !res.Navigated {
		t.Error("a 502 act did not count as a navigation")
	}
	snap = b.observe(t)
	if !snap.StatusIn([]int{502}) || b.s.AppState()["http_status"] != float64(502) {
		t.Errorf("after a 502: status %d app_state %v", snap.HTTPStatus, b.s.AppState())
	}
}

func arm(t *testing.T, base, fault string, count int) {
	t.Helper()
	body := strings.NewReader(fmt.Sprintf(`{"fault":%q,"count":%d}`, fault, count))
	resp, err := http.Post(base+"/_control/arm", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("arm %s: %s", fault, resp.Status)
	}
}

// secretMap is a runtime.SecretSource.
type secretMap map[string]string

func (m secretMap) Secret(ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", errors.New("no secret " + ref)
}

// TestReplaySavingsBalanceOverStateContract replays the reference lookup,
// compiled against the HTML app, over the state contract unchanged: the
// same descriptors, the same outcomes, the same recovery rules.
func TestReplaySavingsBalanceOverStateContract(t *testing.T) {
	t.Parallel()
	const dir = "../../examples/capabilities"
	loaded, err := capability.Load(dir + "/memberdesk.savings_balance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		member   string
		fault    string
		status   domain.RunStatus
		outcome  string
		outputs  map[string]any
		recovers bool
	}{
		{name: "found", member: "12345", status: domain.StatusSuccess,
			outputs: map[string]any{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"}},
		{name: "not found", member: "99999", status: domain.StatusBusinessOutcome, outcome: "member_not_found"},
		{name: "no savings", member: "34567", status: domain.StatusBusinessOutcome, outcome: "no_savings_account"},
		{name: "restricted", member: "45678", status: domain.StatusBusinessOutcome, outcome: "member_restricted"},
		{name: "transient 502", member: "12345", fault: mockapp.FaultTransientLoad, status: domain.StatusSuccess, recovers: true,
			outputs: map[string]any{"savings_balance": "1234.56"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupE2E(t, mockapp.Options{})
			lib, err := replay.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.fault != "" {
				arm(t, b.srv.URL(), tt.fault, 1)
			}
			rec, err := replay.Run(b.ctx, replay.Options{
				Capability: loaded, Library: lib, Inputs: map[string]string{"member_id": tt.member},
				BaseURL: b.srv.URL(), Surface: b.s, RunID: "state-" + strings.ReplaceAll(tt.name, " ", "-"),
				Secrets: secretMap{"corebank_operator": mockapp.DefaultOperator, "corebank_password": mockapp.DefaultPassword},
			})
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != tt.status || rec.Outcome != tt.outcome {
				t.Fatalf("status %s outcome %q (%s: %s), want %s %q", rec.Status, rec.Outcome, rec.FailureCode, rec.Message, tt.status, tt.outcome)
			}
			for k, v := range tt.outputs {
				if got := fmt.Sprint(rec.Outputs[k]); got != fmt.Sprint(v) {
					t.Errorf("output %s = %v, want %v", k, rec.Outputs[k], v)
				}
			}
			if tt.recovers && rec.RecoveryAttempts == 0 {
				t.Error("the 502 was not recovered from")
			}
		})
	}
}
