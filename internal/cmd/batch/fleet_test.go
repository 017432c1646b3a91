package batchcmd_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/store/pgtest"
)

// Two `cua worker` processes on one real PostgreSQL drain 100 lookups:
// every job completes, each run done exactly once, and both workers took
// jobs.
func TestFleetOnPostgres(t *testing.T) {
	ctx := context.Background()
	pg, err := pgtest.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	if _, err := pg.CreateDatabase(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	db := pg.URL("fleet")
	w := setupDB(t, db)
	q, err := jobs.Open(ctx, jobs.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	members := []string{"12345", "23456", "34567", "45678", "56789"}
	ids := make([]int64, 0, 100)
	for i := range 100 {
		j, err := q.Submit(ctx, jobs.RunArgs{Ref: "memberdesk.savings_balance@1.2.0", BaseURL: w.app.URL(),
			Inputs: map[string]string{"member_id": members[i%len(members)]}, IdempotencyKey: fmt.Sprint("fleet-", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	start := time.Now()
	var logs syncBuffer
	for range 2 {
		c := w.command(append([]string{"worker", "--db", db, "--workers", "2", "--job-timeout", "120s"}, w.allow...)...)
		c.Stderr = &logs
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Signal(syscall.SIGTERM); _ = c.Wait() })
	}
	var done []*jobs.Job
	for {
		js, err := q.List(ctx, jobs.ListParams{IDs: ids, Limit: len(ids)})
		if err != nil {
			t.Fatal(err)
		}
		done = done[:0]
		for _, j := range js {
			if j.Final() {
				done = append(done, j)
			}
		}
		if len(done) == len(ids) {
			break
		}
		// Generous: on CI's 2 cores this test shares the machine with every
		// other package's browsers (measured 0.3 jobs/s there, 0.9 alone).
		if time.Since(start) > 480*time.Second {
			t.Fatalf("%d of 100 jobs final after 480s; runs:\n%s\nworkers (tail):\n%s", len(done), w.runsTable(t), tail(logs.String(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(start)
	by := map[string]int{}
	var runMS int64
	for _, j := range done {
		if j.State != "completed" || j.Result == nil || j.Result.Class() == "" {
			t.Errorf("job %d: %s %+v", j.ID, j.State, j.Result)
			continue
		}
		runMS += j.Result.DurationMS
		by[j.AttemptedBy[len(j.AttemptedBy)-1]]++
	}
	t.Logf("fleet: 100 lookups in %s (%.1f jobs/s), mean run %d ms, per worker %v", elapsed.Round(time.Millisecond),
		100/elapsed.Seconds(), runMS/100, by)
	if len(by) != 2 {
		t.Errorf("jobs were taken by %d workers, want 2: %v", len(by), by)
	}
	ended := w.endedRuns(t)
	if len(ended) != 100 {
		t.Fatalf("%d jobs with an ended run, want 100", len(ended))
	}
	for job, n := range ended {
		if n != 1 {
			t.Errorf("job %s ran to the end %d times", job, n)
		}
	}
}
