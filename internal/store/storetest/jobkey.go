package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/store"
)

func testJobKeys(t *testing.T, h Harness) {
	b := setup(t, h)
	k := store.JobKey{CapabilityID: "transfer", Key: "k1", InputsDigest: "d1"}
	got, created, err := b.st.ClaimJobKey(b.ctx, k)
	if err != nil || !created || got.JobID != 0 || got.Generation != 0 || !got.CreatedAt.Equal(epoch) {
		t.Fatalf("first ClaimJobKey = %+v, %v, %v; want created at generation 0", got, created, err)
	}
	if err := b.st.SetJobKeyJob(b.ctx, "transfer", "k1", 0, 7); err != nil {
		t.Fatalf("SetJobKeyJob: %v", err)
	}
	if err := b.st.SetJobKeyJob(b.ctx, "transfer", "k1", 0, 7); err != nil {
		t.Errorf("SetJobKeyJob again with the same job: %v, want nil", err)
	}
	if err := b.st.SetJobKeyJob(b.ctx, "transfer", "k1", 0, 8); !errors.Is(err, store.ErrKeyMoved) {
		t.Errorf("SetJobKeyJob with another job: err = %v, want ErrKeyMoved", err)
	}
	other := k
	other.InputsDigest = "d2"
	got, created, err = b.st.ClaimJobKey(b.ctx, other)
	if err != nil || created || got.JobID != 7 || got.InputsDigest != "d1" {
		t.Fatalf("second ClaimJobKey = %+v, %v, %v; want the first binding, not created", got, created, err)
	}
	if _, err := b.st.RebindJobKey(b.ctx, store.JobKey{CapabilityID: "transfer", Key: "k1", InputsDigest: "d3", Generation: 5}); !errors.Is(err, store.ErrKeyMoved) {
		t.Errorf("RebindJobKey at a stale generation: err = %v, want ErrKeyMoved", err)
	}
	if _, err := b.st.RebindJobKey(b.ctx, store.JobKey{CapabilityID: "transfer", Key: "absent", InputsDigest: "d3"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RebindJobKey of an unbound key: err = %v, want ErrNotFound", err)
	}
	re, err := b.st.RebindJobKey(b.ctx, store.JobKey{CapabilityID: "transfer", Key: "k1", InputsDigest: "d1"})
	if err != nil || re.Generation != 1 || re.JobID != 0 {
		t.Fatalf("RebindJobKey = %+v, %v; want generation 1, no job", re, err)
	}
	if err := b.st.SetJobKeyJob(b.ctx, "transfer", "k1", 0, 9); !errors.Is(err, store.ErrKeyMoved) {
		t.Errorf("SetJobKeyJob at the old generation: err = %v, want ErrKeyMoved", err)
	}
	if _, err := b.st.GetJobKey(b.ctx, "other", "k1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetJobKey of another capability: err = %v, want ErrNotFound (keys are per capability id)", err)
	}
	if _, _, err := b.st.ClaimJobKey(b.ctx, store.JobKey{CapabilityID: "transfer", Key: "k2"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("ClaimJobKey without a digest: err = %v, want ErrInvalid", err)
	}
}

// testJobKeyConcurrent: of many submitters claiming one key, one creates
// the binding and every other reads that same binding back.
func testJobKeyConcurrent(t *testing.T, h Harness) {
	b := setup(t, h)
	const n = 8
	var wg sync.WaitGroup
	results := make([]store.JobKey, n)
	createds := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], createds[i], errs[i] = b.st.ClaimJobKey(b.ctx, store.JobKey{CapabilityID: "transfer", Key: "k",
				InputsDigest: fmt.Sprintf("d%d", i)})
		})
	}
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		if createds[i] {
			winners++
		}
		if results[i].InputsDigest != results[0].InputsDigest {
			t.Errorf("claim %d read digest %s, claim 0 read %s: every caller must see the one binding", i, results[i].InputsDigest, results[0].InputsDigest)
		}
	}
	if winners != 1 {
		t.Errorf("%d claims created the binding, want exactly 1", winners)
	}
}

func testSettleIntervention(t *testing.T, h Harness) {
	b := setup(t, h)
	if _, _, err := b.st.ClaimJobKey(b.ctx, store.JobKey{CapabilityID: "transfer", Key: "k", InputsDigest: "d", JobID: 4}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"iv-1", "iv-2"} {
		if _, err := b.st.EnqueueIntervention(b.ctx, store.Intervention{ID: id, SessionID: "j4-a1", RunID: "j4-a1", Reason: "died after confirm"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.st.SettleIntervention(b.ctx, store.Settlement{ID: "iv-1", Verdict: "maybe", By: "alice"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a verdict other than landed/not_landed: err = %v, want ErrInvalid", err)
	}
	if _, err := b.st.SettleIntervention(b.ctx, store.Settlement{ID: "iv-1", Verdict: store.VerdictLanded}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a settlement naming nobody: err = %v, want ErrInvalid", err)
	}
	release := &store.JobKey{CapabilityID: "transfer", Key: "k"}
	// A release naming another job than the binding's releases nothing.
	in, err := b.st.SettleIntervention(b.ctx, store.Settlement{ID: "iv-1", Verdict: store.VerdictNotLanded, By: "cli:alice",
		Note: "no ledger entry", Release: release, ReleaseJobID: 5})
	if err != nil || in.Status != store.InterventionResolved || in.Verdict != store.VerdictNotLanded || in.ResolvedBy != "cli:alice" ||
		in.Note != "no ledger entry" || in.Resolution != "not landed: no ledger entry" || !in.ResolvedAt.Equal(epoch) {
		t.Fatalf("SettleIntervention = %+v, %v", in, err)
	}
	if k, _ := b.st.GetJobKey(b.ctx, "transfer", "k"); !k.ReleasedAt.IsZero() {
		t.Errorf("a release naming job 5 released the binding of job 4: %+v", k)
	}
	if _, err := b.st.SettleIntervention(b.ctx, store.Settlement{ID: "iv-1", Verdict: store.VerdictLanded, By: "bob"}); !errors.Is(err, store.ErrAlreadyResolved) {
		t.Errorf("settling twice: err = %v, want ErrAlreadyResolved", err)
	}
	b.clock.Advance(1e9)
	if _, err := b.st.SettleIntervention(b.ctx, store.Settlement{ID: "iv-2", Verdict: store.VerdictNotLanded, By: "cli:bob",
		Release: release, ReleaseJobID: 4}); err != nil {
		t.Fatal(err)
	}
	k, err := b.st.GetJobKey(b.ctx, "transfer", "k")
	if err != nil || k.ReleasedAt.IsZero() || k.ReleasedBy != "cli:bob" {
		t.Errorf("binding after a not-landed settlement = %+v, %v; want released by cli:bob", k, err)
	}
	list, err := b.st.ListInterventions(b.ctx, store.InterventionFilter{Status: store.InterventionResolved})
	if err != nil || len(list) != 2 || list[1].ResolvedBy != "cli:bob" {
		t.Errorf("resolved interventions = %+v, %v", list, err)
	}
}
