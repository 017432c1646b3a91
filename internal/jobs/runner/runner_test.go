package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/runner"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/secret"
)

const examples = "../../../examples/capabilities"

var balances = map[string]string{"12345": "1234.56", "56789": "12345678.90"}

// TestWarmSessionReenters: on a warm session, the quick lookup (identity
// check and reentry declared) starts at its reentry step without loading
// the entrypoint, and still answers for the member asked for.
func TestWarmSessionReenters(t *testing.T) {
	t.Parallel()
	lib, quick := examplesOf(t, "memberdesk.savings_balance_quick")
	app := startApp(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	data := t.TempDir()
	r := runner.New(ctx, runner.Config{DataDir: data, Secrets: signOnSecrets(t), WarmTTL: time.Minute, AllowOrigins: []string{app.URL()}})
	defer r.Close()
	for i, member := range []string{"12345", "56789"} {
		rec, err := r.Run(ctx, jobs.Request{RunID: fmt.Sprintf("q%d", i), Capability: quick, Library: lib,
			Inputs: map[string]string{"member_id": member}, BaseURL: app.URL()})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["savings_balance"]) != balances[member] {
			t.Fatalf("run %d: %s %s %v, want %s's balance", i, rec.Status, rec.Message, rec.Outputs, member)
		}
		events, err := os.ReadFile(filepath.Join(data, "runs", rec.RunID, "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Contains(string(events), `"type":"reentered"`), i == 1; got != want {
			t.Errorf("run %d reentered: %v, want %v", i, got, want)
		}
	}
}

// examplesOf loads the example library and one capability of it.
func examplesOf(t *testing.T, name string) (*replay.DirLibrary, *capability.Loaded) {
	t.Helper()
	lib, err := replay.LoadDir(examples)
	if err != nil {
		t.Fatal(err)
	}
	l, err := capability.Load(examples + "/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return lib, l
}

// startApp starts a MemberDesk for one test.
func startApp(t *testing.T) *mockapp.Server {
	t.Helper()
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	return app
}

// signOnPassword is MemberDesk's operator password, a worker-held secret.
const signOnPassword = "teller-pass-1"

func signOnSecrets(t *testing.T) *secret.Store {
	t.Helper()
	sec, err := secret.NewStore(func(k string) string {
		return map[string]string{"CUA_SECRET_COREBANK_OPERATOR": "OP1001", "CUA_SECRET_COREBANK_PASSWORD": signOnPassword}[k]
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// TestWarmSessions runs lookups through one Runner on real Chromium and
// MemberDesk and counts the application's sign-ons: warm sessions sign on
// once for many runs; a run that fails closed leaves no session behind, so
// the next signs on afresh; with warm sessions off every run signs on.
func TestWarmSessions(t *testing.T) {
	t.Parallel()
	lib, lookup := examplesOf(t, "memberdesk.savings_balance")
	sec := signOnSecrets(t)
	type step struct {
		member string
		fault  string
		status domain.RunStatus
	}
	tests := []struct {
		name     string
		ttl      time.Duration
		steps    []step
		sessions int
	}{
		{name: "warm", ttl: time.Minute, sessions: 1,
			steps: []step{{member: "12345"}, {member: "56789"}, {member: "12345"}}},
		{name: "a failed run's session is not lent again", ttl: time.Minute, sessions: 2,
			steps: []step{{member: "12345"}, {member: "56789", fault: mockapp.FaultFocusSteal, status: domain.StatusNeedsHuman}, {member: "12345"}}},
		{name: "warm sessions off", sessions: 3,
			steps: []step{{member: "12345"}, {member: "56789"}, {member: "12345"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := startApp(t)
			ctl := mockapp.NewClient(app.URL(), nil)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			r := runner.New(ctx, runner.Config{DataDir: t.TempDir(), Secrets: sec, WarmTTL: tt.ttl, AllowOrigins: []string{app.URL()}})
			defer r.Close()
			for i, s := range tt.steps {
				if s.fault != "" {
					if err := ctl.Arm(ctx, s.fault, 1, 0); err != nil {
						t.Fatal(err)
					}
				}
				rec, err := r.Run(ctx, jobs.Request{RunID: fmt.Sprintf("r%d", i), Capability: lookup, Library: lib,
					Inputs: map[string]string{"member_id": s.member}, BaseURL: app.URL()})
				if err != nil {
					t.Fatal(err)
				}
				want := s.status
				if want == "" {
					want = domain.StatusSuccess
				}
				if rec.Status != want {
					t.Fatalf("run %d: %s %s %s, want %s", i, rec.Status, rec.FailureCode, rec.Message, want)
				}
				if want == domain.StatusSuccess && fmt.Sprint(rec.Outputs["savings_balance"]) != balances[s.member] {
					t.Errorf("run %d: member %s balance %v, want %s", i, s.member, rec.Outputs["savings_balance"], balances[s.member])
				}
			}
			st, err := ctl.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Sessions != tt.sessions {
				t.Errorf("%d sign-ons for %d runs, want %d", st.Sessions, len(tt.steps), tt.sessions)
			}
		})
	}
}
