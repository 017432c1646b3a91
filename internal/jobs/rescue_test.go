package jobs_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
)

// frozenRunner indexes its run and then never returns until released,
// whatever its context says: a worker process that stopped (frozen, or
// killed mid-run as River sees it).
type frozenRunner struct{ release chan struct{} }

func (f frozenRunner) Run(ctx context.Context, r jobs.Request) (*domain.RunRecord, error) {
	if _, _, err := r.Gate.Begin(ctx, r.RunID, r.Capability, map[string]any{"member_id": r.Inputs["member_id"]}, ""); err != nil {
		return nil, err
	}
	<-f.release
	return nil, errors.New("released")
}

// A batch whose row is held by a stopped worker counts it as waiting for
// a rescue once it has run past the job timeout and the slack a live
// worker has to return, and its ETA waits for that rescue: never before.
func TestBatchCountsRowsWaitingForRescue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	release := make(chan struct{})
	b := setupFrozen(t, frozenRunner{release: release})
	t.Cleanup(func() { close(release) })
	const timeout, rescue = time.Second, 40 * time.Second
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: filepath.Join(b.dir, "queue.db"), JobTimeout: timeout, RescueAfter: rescue})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	bctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var seen []jobs.Progress
	_, err = q.RunBatch(bctx, jobs.BatchParams{Args: jobs.RunArgs{Ref: lookup, BaseURL: "http://127.0.0.1:1"},
		Rows: []jobs.Row{{N: 1, Inputs: map[string]string{"member_id": "12345"}}}, Out: filepath.Join(b.dir, "results.jsonl"),
		Tick: 100 * time.Millisecond, Progress: func(p jobs.Progress) {
			seen = append(seen, p)
			if p.Rescue > 0 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("batch: %v; want it cancelled once the row waits for a rescue (seen %d progress reports)", err, len(seen))
	}
	last := seen[len(seen)-1]
	if last.Rescue != 1 || last.Finished() != 0 {
		t.Fatalf("last progress %+v; want one row waiting for a rescue", last)
	}
	if last.Elapsed < timeout+jobs.RescueSlack {
		t.Errorf("the row counted as waiting for a rescue after %s; a live worker has %s", last.Elapsed, timeout+jobs.RescueSlack)
	}
	// The attempt began after the batch's clock started; the rescue comes
	// at most the rescue delay and the rescuer's interval after it.
	if least := rescue + jobs.RescuerInterval - last.Elapsed; last.RescueIn < least-time.Second || last.RescueIn > least+5*time.Second {
		t.Errorf("RescueIn %s; want about %s", last.RescueIn, least)
	}
	if last.ETA() < last.RescueIn {
		t.Errorf("ETA %s is shorter than the wait for the rescue %s", last.ETA(), last.RescueIn)
	}
	for _, p := range seen[:len(seen)-1] {
		if p.Rescue != 0 {
			t.Fatalf("progress at %s counts %d rows waiting for a rescue; want none before %s", p.Elapsed, p.Rescue, timeout+jobs.RescueSlack)
		}
	}
}

// setupFrozen is a catalog holding the lookup and a queue whose one
// worker runs r; it returns the data directory.
func setupFrozen(t *testing.T, r jobs.Runner) *testBundle {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cat, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := cat.AddFile(ctx, examples+"/memberdesk.savings_balance.yaml"); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: filepath.Join(dir, "queue.db"), Workers: 1,
		Worker: jobs.NewWorker(cat, st, nil, r, nil), PollInterval: 50 * time.Millisecond, Keys: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(sctx)
		q.Close()
	})
	return &testBundle{q: q, st: st, cat: cat, dir: dir}
}
