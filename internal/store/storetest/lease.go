package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

func testLeases(t *testing.T, h Harness) {
	b := setup(t, h)
	ttl := time.Minute
	l, err := b.st.AcquireLease(b.ctx, store.LeaseRequest{SessionID: "s1", Holder: "worker", TTL: ttl})
	if err != nil || l.Epoch != 1 || !l.ExpiresAt.Equal(epoch.Add(ttl)) {
		t.Fatalf("first acquire = %+v, %v; want epoch 1 until %s", l, err, epoch.Add(ttl))
	}
	b.clock.Advance(10 * time.Second)
	if l, err = b.st.AcquireLease(b.ctx, store.LeaseRequest{SessionID: "s1", Holder: "worker", TTL: ttl}); err != nil || l.Epoch != 1 {
		t.Fatalf("re-acquire by the holder = %+v, %v; want a renewal at epoch 1", l, err)
	}
	if _, err := b.st.AcquireLease(b.ctx, store.LeaseRequest{SessionID: "s1", Holder: "bob", TTL: ttl}); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("acquire by another holder: err = %v, want ErrLeaseHeld", err)
	}
	if l, err = b.st.RenewLease(b.ctx, "s1", "worker", 1, ttl); err != nil || !l.ExpiresAt.Equal(b.clock.Now().Add(ttl)) {
		t.Fatalf("RenewLease = %+v, %v", l, err)
	}
	human, err := b.st.AcquireLease(b.ctx, store.LeaseRequest{SessionID: "s1", Holder: "bob", TTL: ttl, Force: true})
	if err != nil || human.Epoch != 2 || human.Holder != "bob" {
		t.Fatalf("takeover = %+v, %v; want bob at epoch 2", human, err)
	}
	if _, err := b.st.RenewLease(b.ctx, "s1", "worker", 1, ttl); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("renew by the old holder: err = %v, want ErrLeaseLost", err)
	}
	if err := b.st.ReleaseLease(b.ctx, "s1", "worker", 1); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("release by the old holder: err = %v, want ErrLeaseLost", err)
	}
	if err := b.st.ReleaseLease(b.ctx, "s1", "bob", 2); err != nil {
		t.Fatalf("release by bob: %v", err)
	}
	if l, err = b.st.AcquireLease(b.ctx, store.LeaseRequest{SessionID: "s1", Holder: "worker", TTL: ttl}); err != nil || l.Epoch != 3 {
		t.Fatalf("acquire after release = %+v, %v; want epoch 3", l, err)
	}
	b.clock.Advance(2 * ttl)
	if _, err := b.st.RenewLease(b.ctx, "s1", "worker", 3, ttl); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("renew after expiry: err = %v, want ErrLeaseLost", err)
	}
	if l, err = b.st.AcquireLease(b.ctx, store.LeaseRequest{SessionID: "s1", Holder: "bob", TTL: ttl}); err != nil || l.Epoch != 4 {
		t.Fatalf("acquire of an expired lease = %+v, %v; want bob at epoch 4", l, err)
	}
	if got, err := b.st.GetLease(b.ctx, "s1"); err != nil || got != l {
		t.Fatalf("GetLease = %+v, %v; want %+v", got, err, l)
	}
	if _, err := b.st.GetLease(b.ctx, "absent"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLease of an absent session: err = %v, want ErrNotFound", err)
	}
	if _, err := b.st.AcquireLease(b.ctx, store.LeaseRequest{SessionID: "s2", Holder: "w"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("acquire without ttl: err = %v, want ErrInvalid", err)
	}
}

func testInterventions(t *testing.T, h Harness) {
	b := setup(t, h)
	for i, s := range []string{"s1", "s2", "s1"} {
		in := store.Intervention{ID: fmt.Sprintf("i%d", i), SessionID: s, RunID: "run-1", Reason: "TARGET_AMBIGUOUS"}
		if got, err := b.st.EnqueueIntervention(b.ctx, in); err != nil || got.Status != store.InterventionOpen {
			t.Fatalf("EnqueueIntervention = %+v, %v", got, err)
		}
		b.clock.Advance(time.Second)
	}
	if _, err := b.st.EnqueueIntervention(b.ctx, store.Intervention{ID: "i0", SessionID: "s", Reason: "x"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("enqueue a used id: err = %v, want ErrExists", err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = b.st.ClaimIntervention(b.ctx, "i0", fmt.Sprintf("op-%d", i)) })
	}
	wg.Wait()
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrAlreadyClaimed):
			t.Fatalf("claimer %d: err = %v, want ErrAlreadyClaimed", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d claimers won i0, want exactly 1", wins)
	}
	res, err := b.st.ResolveIntervention(b.ctx, "i0", "re-anchored at checkpoint 2")
	if err != nil || res.Status != store.InterventionResolved || res.Resolution != "re-anchored at checkpoint 2" || res.ClaimedBy == "" {
		t.Fatalf("ResolveIntervention = %+v, %v", res, err)
	}
	if _, err := b.st.ResolveIntervention(b.ctx, "i0", "again"); !errors.Is(err, store.ErrAlreadyResolved) {
		t.Fatalf("resolve twice: err = %v, want ErrAlreadyResolved", err)
	}
	if _, err := b.st.ClaimIntervention(b.ctx, "absent", "op"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("claim absent: err = %v, want ErrNotFound", err)
	}
	open, err := b.st.ListInterventions(b.ctx, store.InterventionFilter{Status: store.InterventionOpen})
	if err != nil || len(open) != 2 || open[0].ID != "i1" || open[1].ID != "i2" {
		t.Fatalf("open interventions = %+v, %v; want i1, i2", open, err)
	}
	s1, err := b.st.ListInterventions(b.ctx, store.InterventionFilter{SessionID: "s1"})
	if err != nil || len(s1) != 2 || s1[0].ID != "i0" || s1[1].ID != "i2" {
		t.Fatalf("interventions of s1 = %+v, %v; want i0, i2", s1, err)
	}
}

// testInterventionDetailAndRelease: why a session waits survives a round
// trip, and a claim handed back reopens the intervention for anyone.
func testInterventionDetailAndRelease(t *testing.T, h Harness) {
	b := setup(t, h)
	in := store.Intervention{ID: "w1", SessionID: "s1", RunID: "run-1", Reason: "UNEXPECTED_STATE",
		Capability: "bank.transfer@1.0.0", Step: "confirm", FailureCode: domain.CodeUnexpectedState,
		Effects: json.RawMessage(`{"sent":false}`), Summary: "an undeclared dialog is open",
		Inputs: json.RawMessage(`{"amount":"25.00","account":"[sensitive]"}`), Screen: "Transfer funds; Confirm",
		RelayAddr: "http://127.0.0.1:40123"}
	if _, err := b.st.EnqueueIntervention(b.ctx, in); err != nil {
		t.Fatalf("EnqueueIntervention: %v", err)
	}
	got, err := b.st.ListInterventions(b.ctx, store.InterventionFilter{SessionID: "s1"})
	if err != nil || len(got) != 1 {
		t.Fatalf("ListInterventions = %+v, %v", got, err)
	}
	g := got[0]
	if g.Capability != in.Capability || g.Step != in.Step || g.FailureCode != in.FailureCode ||
		string(g.Effects) != string(in.Effects) || g.Summary != in.Summary ||
		string(g.Inputs) != string(in.Inputs) || g.Screen != in.Screen || g.RelayAddr != in.RelayAddr {
		t.Fatalf("stored %+v, want the details of %+v", g, in)
	}
	if _, err := b.st.ReleaseIntervention(b.ctx, "w1", "op-a"); !errors.Is(err, store.ErrAlreadyClaimed) {
		t.Fatalf("release an open intervention: err = %v, want ErrAlreadyClaimed", err)
	}
	if _, err := b.st.ClaimIntervention(b.ctx, "w1", "op-a"); err != nil {
		t.Fatalf("claim: %v", err)
	}
	if _, err := b.st.ReleaseIntervention(b.ctx, "w1", "op-b"); !errors.Is(err, store.ErrAlreadyClaimed) {
		t.Fatalf("release by another operator: err = %v, want ErrAlreadyClaimed", err)
	}
	rel, err := b.st.ReleaseIntervention(b.ctx, "w1", "op-a")
	if err != nil || rel.Status != store.InterventionOpen || rel.ClaimedBy != "" || !rel.ClaimedAt.IsZero() {
		t.Fatalf("ReleaseIntervention = %+v, %v; want open and unclaimed", rel, err)
	}
	if c, err := b.st.ClaimIntervention(b.ctx, "w1", "op-b"); err != nil || c.ClaimedBy != "op-b" {
		t.Fatalf("claim after release = %+v, %v", c, err)
	}
	bare := store.Intervention{ID: "w2", SessionID: "s2", Reason: "NEEDS_HUMAN"}
	if _, err := b.st.EnqueueIntervention(b.ctx, bare); err != nil {
		t.Fatalf("EnqueueIntervention without detail: %v", err)
	}
	if got, err := b.st.ListInterventions(b.ctx, store.InterventionFilter{SessionID: "s2"}); err != nil || len(got) != 1 ||
		got[0].Inputs != nil || got[0].Screen != "" || got[0].RelayAddr != "" {
		t.Fatalf("an intervention without inputs, screen or relay = %+v, %v", got, err)
	}
	if _, err := b.st.ReleaseIntervention(b.ctx, "absent", "op-a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("release absent: err = %v, want ErrNotFound", err)
	}
}
