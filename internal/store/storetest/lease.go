package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

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
