package storetest

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/store"
)

// RunHeal runs the conformance tests of [store.HealStore] against h, whose
// stores must implement it.
func RunHeal(t *testing.T, h Harness) {
	t.Run("HealProposals", func(t *testing.T) { t.Parallel(); testHealProposals(t, h) })
	t.Run("HealTransitionConcurrent", func(t *testing.T) { t.Parallel(); testHealConcurrent(t, h) })
}

func healStore(t *testing.T, b bundle) store.HealStore {
	t.Helper()
	hs, ok := b.st.(store.HealStore)
	if !ok {
		t.Fatalf("%T does not implement store.HealStore", b.st)
	}
	return hs
}

func healDoc(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}

// testHealProposals: add, the same id again, an invalid row, list by
// capability, a transition from the wrong state changes nothing, a move
// with an active version writes all three, history in order.
func testHealProposals(t *testing.T, h Harness) {
	b := setup(t, h)
	hs := healStore(t, b)
	p := store.HealProposal{ID: "heal-1", CapabilityID: "app.lookup", State: "proposed", Doc: healDoc(map[string]string{"v": "1"})}
	first := store.HealTransition{Doc: healDoc(map[string]string{"to": "proposed"})}
	if err := hs.AddHealProposal(b.ctx, p, first); err != nil {
		t.Fatal(err)
	}
	if err := hs.AddHealProposal(b.ctx, p, first); !errors.Is(err, store.ErrExists) {
		t.Fatalf("same id again: %v, want ErrExists", err)
	}
	bad := p
	bad.ID, bad.CapabilityID = "heal-2", ""
	if err := hs.AddHealProposal(b.ctx, bad, first); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("no capability id: %v, want ErrInvalid", err)
	}
	other := store.HealProposal{ID: "heal-3", CapabilityID: "app.other", State: "quarantined", Doc: healDoc(1)}
	if err := hs.AddHealProposal(b.ctx, other, first); err != nil {
		t.Fatal(err)
	}
	if ps, err := hs.ListHealProposals(b.ctx, "app.lookup"); err != nil || len(ps) != 1 || ps[0].ID != "heal-1" {
		t.Fatalf("list app.lookup: %v %+v", err, ps)
	}
	if ps, err := hs.ListHealProposals(b.ctx, ""); err != nil || len(ps) != 2 {
		t.Fatalf("list all: %v %d", err, len(ps))
	}
	if _, err := hs.GetHealActive(b.ctx, "app.lookup"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("active before any: %v, want ErrNotFound", err)
	}
	moved := p
	moved.State, moved.Doc = "canary", healDoc(map[string]string{"v": "2"})
	act := &store.HealActive{CapabilityID: "app.lookup", Doc: healDoc(map[string]string{"version": "1.0.1"})}
	if err := hs.UpdateHealProposal(b.ctx, moved, "evaluated", store.HealTransition{Doc: healDoc("x")}, act); !errors.Is(err, store.ErrHealState) {
		t.Fatalf("from the wrong state: %v, want ErrHealState", err)
	}
	if _, err := hs.GetHealActive(b.ctx, "app.lookup"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused move set the active version: %v", err)
	}
	if err := hs.UpdateHealProposal(b.ctx, moved, "proposed", store.HealTransition{Doc: healDoc(map[string]string{"to": "canary"})}, act); err != nil {
		t.Fatal(err)
	}
	got, err := hs.GetHealProposal(b.ctx, "heal-1")
	if err != nil || got.State != "canary" || string(got.Doc) != `{"v":"2"}` || got.CreatedAt.IsZero() {
		t.Fatalf("after move: %v %+v", err, got)
	}
	a, err := hs.GetHealActive(b.ctx, "app.lookup")
	if err != nil || string(a.Doc) != `{"version":"1.0.1"}` {
		t.Fatalf("active: %v %s", err, a.Doc)
	}
	ts, err := hs.ListHealTransitions(b.ctx, "heal-1")
	if err != nil || len(ts) != 2 || string(ts[0].Doc) != `{"to":"proposed"}` || string(ts[1].Doc) != `{"to":"canary"}` || ts[0].Seq >= ts[1].Seq {
		t.Fatalf("history: %v %+v", err, ts)
	}
	if _, err := hs.GetHealProposal(b.ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("absent: %v, want ErrNotFound", err)
	}
}

// testHealConcurrent: of many concurrent moves from one state exactly one
// wins; the others get ErrHealState and leave no transition.
func testHealConcurrent(t *testing.T, h Harness) {
	b := setup(t, h)
	hs := healStore(t, b)
	p := store.HealProposal{ID: "heal-c", CapabilityID: "app.lookup", State: "canary", Doc: healDoc(0)}
	if err := hs.AddHealProposal(b.ctx, p, store.HealTransition{Doc: healDoc("start")}); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := p
			q.State, q.Doc = "reverted", healDoc(i)
			errs[i] = hs.UpdateHealProposal(b.ctx, q, "canary", store.HealTransition{Doc: healDoc(i)}, nil)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrHealState):
			t.Errorf("concurrent move: %v", err)
		}
	}
	ts, err := hs.ListHealTransitions(b.ctx, "heal-c")
	if won != 1 || err != nil || len(ts) != 2 {
		t.Fatalf("%d moves won, %d transitions (%v); want 1 and 2", won, len(ts), err)
	}
}
