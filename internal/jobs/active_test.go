package jobs_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/heal"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/store"
)

const lookupActive = "memberdesk.savings_balance@active"

// healed opens a catalog and store in dir holding the lookup and a heal
// of it approved by alice: memberdesk.savings_balance@active is 1.2.1, a
// canary of two runs (the MemberDesk rename of Search to Look up).
func healed(t *testing.T, dir string) (*catalog.Catalog, store.Store, *heal.Service, *heal.Proposal) {
	t.Helper()
	ctx := t.Context()
	cat, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, f := range []string{"corebank.auth.sign_on.yaml", "memberdesk.savings_balance.yaml"} {
		if _, err := cat.AddFile(ctx, filepath.Join(examples, f)); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := heal.Open(st, cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := cat.Resolve(ctx, lookup)
	if err != nil {
		t.Fatal(err)
	}
	screen := &domain.UiSnapshot{URL: "http://127.0.0.1/content/search"}
	for i, n := range []struct{ role, name string }{{"textbox", "Member number"}, {"button", "Look up"}, {"button", "Clear"}} {
		screen.Nodes = append(screen.Nodes, domain.Node{Index: i, Path: "content/0." + string(rune('0'+i)), Role: n.role, Name: n.name, Frame: "content"})
	}
	p, _, err := svc.Propose(ctx, replay.Halt{RunID: "run-0", Capability: l, Step: "search", Target: *l.Capability.Step("search").Target,
		Code: domain.CodeTargetNotFound, Snapshot: screen, StepNumber: 3, Node: -1})
	if err != nil || p == nil {
		t.Fatalf("propose: %v %+v", err, p)
	}
	if _, err := svc.RecordEval(ctx, p.ID, heal.Eval{By: "alice", Passed: true}); err != nil {
		t.Fatal(err)
	}
	if p, err = svc.Approve(ctx, p.ID, "alice", 2); err != nil {
		t.Fatal(err)
	}
	return cat, st, svc, p
}

// openQueue opens and starts a queue over cat that checks what it is
// given, with heal's watch when active is set.
func openQueue(t *testing.T, dir string, cat *catalog.Catalog, st store.Store, run jobs.Runner, active jobs.Active) *jobs.Queue {
	t.Helper()
	q, err := jobs.Open(t.Context(), jobs.Config{SQLitePath: filepath.Join(dir, "queue.db"), Workers: 1,
		Worker: jobs.NewWorker(cat, st, nil, run, nil), PollInterval: 50 * time.Millisecond,
		Capabilities: cat, Keys: st, Active: active})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
		q.Close()
	})
	return q
}

// state returns proposal id as the store holds it.
func state(t *testing.T, svc *heal.Service, id string) *heal.Proposal {
	t.Helper()
	p, err := svc.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestActiveThroughTheQueue: a job for ID@active is checked against the
// version a heal made active and runs it; its SUCCESS counts toward the
// canary; a failing run of it reverts ID@active, and the next job of
// ID@active runs the previous version. A queue without heal's watch
// refuses ID@active, a version the catalog does not hold.
func TestActiveThroughTheQueue(t *testing.T) {
	dir := t.TempDir()
	cat, st, svc, p := healed(t, dir)
	var failing atomic.Bool
	run := &fakeRunner{fail: func(string) bool { return failing.Load() }}
	q := openQueue(t, dir, cat, st, run, heal.OpenWatch(st, cat))
	b := &testBundle{q: q, st: st, cat: cat, run: run, dir: dir}
	submit := func(wantRef string, want domain.RunStatus) {
		t.Helper()
		j, err := q.Submit(t.Context(), jobs.RunArgs{Ref: lookupActive, BaseURL: "http://127.0.0.1:1", Inputs: map[string]string{"member_id": "12345"}})
		if err != nil {
			t.Fatal(err)
		}
		got := b.wait(t, j)
		if got.Result == nil || got.Result.Status != want {
			t.Fatalf("job %d: %+v, want %s", j.ID, got.Result, want)
		}
		run.mu.Lock()
		ref := run.refs[got.Result.RunID]
		run.mu.Unlock()
		if ref != wantRef {
			t.Fatalf("job %d ran %s, want %s", j.ID, ref, wantRef)
		}
	}
	submit("memberdesk.savings_balance@1.2.1", domain.StatusSuccess)
	if got := state(t, svc, p.ID); got.State != heal.StateCanary || len(got.Canary.Done) != 1 {
		t.Fatalf("after one passing run: %s, canary runs %v; want canary with 1 run", got.State, got.Canary.Done)
	}
	failing.Store(true)
	submit("memberdesk.savings_balance@1.2.1", domain.StatusFailed)
	if got := state(t, svc, p.ID); got.State != heal.StateReverted {
		t.Fatalf("after a failing run: %s, want reverted", got.State)
	}
	failing.Store(false)
	submit("memberdesk.savings_balance@1.2.0", domain.StatusSuccess)

	plain := openQueue(t, t.TempDir(), cat, st, &fakeRunner{}, nil)
	_, err := plain.Submit(t.Context(), jobs.RunArgs{Ref: lookupActive, BaseURL: "http://127.0.0.1:1", Inputs: map[string]string{"member_id": "12345"}})
	if !errors.Is(err, jobs.ErrRefused) {
		t.Fatalf("ID@active without heal: %v, want refused", err)
	}
}
