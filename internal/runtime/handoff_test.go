package runtime_test

import (
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
)

// TestStaleEpochRefused: every step of a hand-off leaves an automation
// dispatcher authorized under an older epoch; each of its actions is
// refused LEASE_LOST with 0 dispatches and nothing reaching the app.
func TestStaleEpochRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(t *testing.T, l *hitl.Lease)
	}{
		{"escalated, paused", func(t *testing.T, l *hitl.Lease) { mustStatus(t)(l.Escalate("automation", 1)) }},
		{"claimed by an operator", func(t *testing.T, l *hitl.Lease) {
			mustStatus(t)(l.Escalate("automation", 1))
			mustStatus(t)(l.Claim("alice", time.Minute))
		}},
		{"resuming, not yet running", func(t *testing.T, l *hitl.Lease) {
			mustStatus(t)(l.Escalate("automation", 1))
			mustStatus(t)(l.Resume())
		}},
		{"running again at a newer epoch, not rebound", func(t *testing.T, l *hitl.Lease) {
			mustStatus(t)(l.Escalate("automation", 1))
			st := mustStatus(t)(l.Claim("alice", time.Minute))
			mustStatus(t)(l.Release("alice", st.Epoch))
			mustStatus(t)(l.Resume())
			mustStatus(t)(l.Run("automation"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpts{})
			snap := b.observe(t)
			tt.prepare(t, b.lease)
			_, err := b.d.Act(t.Context(), snap, clickGo(), "")
			wantCode(t, err, domain.CodeLeaseLost)
			if b.d.Dispatches() != 0 || len(b.app.got) != 0 {
				t.Fatalf("dispatches = %d, app got %+v; want 0 and nothing", b.d.Dispatches(), b.app.got)
			}
			b.events.last(t, "dispatch_refused")
		})
	}
}

// TestHandoffCycle: the operator's dispatcher acts as human under HUMAN
// while it holds the session, loses it on release; the automation acts
// again only after it takes the session back and rebinds.
func TestHandoffCycle(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	ctx := t.Context()
	mustStatus(t)(b.lease.Escalate("automation", 1))
	held := mustStatus(t)(b.lease.Claim("alice", time.Minute))
	pol, err := policy.New(policy.Config{Profile: policy.ProfileHuman, AllowedDomains: []string{"app.test"}})
	if err != nil {
		t.Fatal(err)
	}
	hd, err := runtime.New(runtime.Config{Surface: b.surf, Policy: pol, Lease: b.lease, Holder: "human:alice",
		Redactor: redact.New(), Events: b.events, Actor: domain.ActorHuman})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := hd.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hd.Act(ctx, snap, clickGo(), ""); err != nil {
		t.Fatalf("operator's click: %v", err)
	}
	if ev := b.events.last(t, "action_dispatched"); ev.Actor != domain.ActorHuman {
		t.Fatalf("operator's action recorded with actor %q, want human", ev.Actor)
	}
	mustStatus(t)(b.lease.Release("alice", held.Epoch))
	snap, _ = hd.Observe(ctx)
	if _, err := hd.Act(ctx, snap, clickGo(), ""); domain.ErrorCode(err) != domain.CodeLeaseLost || hd.Dispatches() != 1 {
		t.Fatalf("operator after release: %v (%d dispatches), want LEASE_LOST and still 1", err, hd.Dispatches())
	}
	if _, err := b.d.Rebind(); domain.ErrorCode(err) != domain.CodeLeaseLost {
		t.Fatalf("rebind while paused: %v, want LEASE_LOST", err)
	}
	mustStatus(t)(b.lease.Resume())
	run := mustStatus(t)(b.lease.Run("automation"))
	if e, err := b.d.Rebind(); err != nil || e != run.Epoch || b.d.Epoch() != run.Epoch {
		t.Fatalf("Rebind = %d, %v; want epoch %d", e, err, run.Epoch)
	}
	snap = b.observe(t)
	if _, err := b.d.Act(ctx, snap, domain.Action{Type: domain.ActNavigate, URL: "https://app.test/login"}, ""); err != nil {
		t.Fatalf("automation after rebind: %v", err)
	}
	if ev := b.events.last(t, "action_dispatched"); ev.Actor != domain.ActorAutomation {
		t.Fatalf("automation's action recorded with actor %q", ev.Actor)
	}
}

func mustStatus(t *testing.T) func(hitl.Status, error) hitl.Status {
	t.Helper()
	return func(st hitl.Status, err error) hitl.Status {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
}
