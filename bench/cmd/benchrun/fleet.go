package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/store/pgtest"
)

// fleetResult is the fleet phase: two `cua worker` processes on one
// private PostgreSQL draining lookups submitted beforehand.
type fleetResult struct {
	Jobs             int            `json:"jobs"`
	Processes        int            `json:"processes"`
	WorkersEach      int            `json:"workers_each"`
	DrainSeconds     float64        `json:"drain_seconds"`
	LookupsPerMin    float64        `json:"lookups_per_min"`
	RunDuration      dist           `json:"run_duration"`
	PerWorker        map[string]int `json:"per_worker"`
	Completed        int            `json:"completed"`
	Lost             int            `json:"lost"`                // jobs not completed with an answer
	DoneMoreThanOnce int            `json:"done_more_than_once"` // jobs with more than one run that ended with an answer
	Retried          int            `json:"retried"`             // jobs that took more than one attempt
	Wrong            int            `json:"wrong"`
	Samples          []string       `json:"samples,omitempty"`
	Method           []string       `json:"method"`
}

const (
	fleetProcesses = 2
	fleetWorkers   = 2
)

func runFleet(ctx context.Context, c *config, res *results, progress func(string, ...any)) error {
	pg, err := pgtest.Start(ctx)
	if err != nil {
		return err
	}
	defer pg.Stop()
	if _, err := pg.CreateDatabase(ctx, "fleet"); err != nil {
		return err
	}
	app, err := openApp()
	if err != nil {
		return err
	}
	defer app.Close()
	tmp, err := os.MkdirTemp("", "cua-bench-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	h, err := newCuaHome(ctx, c, filepath.Join(tmp, "home"), pg.URL("fleet"))
	if err != nil {
		return err
	}
	q, err := h.queue(ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	ids := make([]int64, 0, c.fleetRows)
	members := map[int64]string{}
	for i := range c.fleetRows {
		j, err := q.Submit(ctx, jobs.RunArgs{Ref: lookupRef, BaseURL: app.URL(),
			Inputs: map[string]string{"member_id": memberOf(i)}, IdempotencyKey: fmt.Sprint("fleet-", i)})
		if err != nil {
			return err
		}
		ids, members[j.ID] = append(ids, j.ID), memberOf(i)
	}
	progress("fleet: %d lookups submitted to PostgreSQL; starting %d workers of %d", len(ids), fleetProcesses, fleetWorkers)
	fr := &fleetResult{Jobs: len(ids), Processes: fleetProcesses, WorkersEach: fleetWorkers, PerWorker: map[string]int{}}
	done, elapsed, err := drainFleet(ctx, c, h, q, ids, app.URL())
	if err != nil {
		return err
	}
	fr.DrainSeconds = round(elapsed.Seconds(), 1)
	fr.LookupsPerMin = round(float64(len(ids))/elapsed.Minutes(), 1)
	if err := fr.judge(ctx, h, done, members); err != nil {
		return err
	}
	fr.Method = []string{
		fmt.Sprintf("a private PostgreSQL (internal/store/pgtest) holds the catalog, the runs and the River queue; %d lookups of %s cycling members %v are submitted first (jobs.Queue.Submit, one idempotency key each)", len(ids), lookupRef, lookupMembers),
		fmt.Sprintf("then %d `bin/cua worker --db postgres://… --workers %d` processes start, each with its own Chromium (warm sessions: %v, the worker's default --warm-ttl); drain: from starting them until every job is final (polled every 200 ms)", fleetProcesses, fleetWorkers, supportsFlag(ctx, c, "worker", "warm-ttl")),
		"per worker: the jobs each worker process (River client id) completed; lost: jobs that did not complete with an answer; done more than once: jobs with more than one indexed run that ended with an answer",
		"wrong: each job's outputs or outcome checked against MemberDesk's known answer for its member",
	}
	res.Fleet = fr
	progress("fleet: %d lookups in %.1fs (%.0f/min), split %v, %d lost, %d done twice, %d wrong", fr.Jobs, fr.DrainSeconds, fr.LookupsPerMin, fr.PerWorker, fr.Lost, fr.DoneMoreThanOnce, fr.Wrong)
	return nil
}

// drainFleet starts the worker processes (allowing the app at base) and
// waits until every job of ids is final; it returns the jobs and how long
// that took.
func drainFleet(ctx context.Context, c *config, h *cuaHome, q *jobs.Queue, ids []int64, base string) ([]*jobs.Job, time.Duration, error) {
	logs := &syncBuilder{}
	start := time.Now()
	allow := allowOrigin(ctx, c, "worker", base)
	for range fleetProcesses {
		w := h.command(ctx, append([]string{"worker", "--db", h.db, "--workers", fmt.Sprint(fleetWorkers), "--job-timeout", "60s",
			"--browser", c.execPath}, allow...)...)
		w.Stderr = logs
		if err := w.Start(); err != nil {
			return nil, 0, err
		}
		defer stopWorker(w)
	}
	deadline := start.Add(time.Duration(len(ids))*3*time.Second + time.Minute)
	for {
		js, err := q.List(ctx, jobs.ListParams{IDs: ids, Limit: len(ids)})
		if err != nil {
			return nil, 0, err
		}
		final := 0
		for _, j := range js {
			if j.Final() {
				final++
			}
		}
		if final == len(ids) {
			return js, time.Since(start), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, 0, fmt.Errorf("%d of %d jobs final after %s; workers (tail): %s", final, len(ids), time.Since(start).Round(time.Second), tail(logs.String(), 2000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stopWorker ends a worker process with SIGTERM (SIGKILL after 30 s).
func stopWorker(w *exec.Cmd) {
	_ = w.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = w.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = w.Process.Kill()
		<-done
	}
}

// judge counts the drained jobs: who did them, lost, done twice, wrong.
func (fr *fleetResult) judge(ctx context.Context, h *cuaHome, js []*jobs.Job, members map[int64]string) error {
	ended, err := h.endedRuns(ctx)
	if err != nil {
		return err
	}
	var durs []float64
	sample := func(s string) {
		if len(fr.Samples) < 5 {
			fr.Samples = append(fr.Samples, s)
		}
	}
	for _, j := range js {
		if j.Attempt > 1 {
			fr.Retried++
		}
		r := j.Result
		if j.State != "completed" || r == nil || r.Class() != "done" {
			fr.Lost++
			sample(fmt.Sprintf("job %d: %s %+v", j.ID, j.State, r))
			continue
		}
		fr.Completed++
		fr.PerWorker[j.AttemptedBy[len(j.AttemptedBy)-1]]++
		durs = append(durs, float64(r.DurationMS))
		if n := ended[fmt.Sprintf("j%d", j.ID)]; n != 1 {
			if n > 1 {
				fr.DoneMoreThanOnce++
			}
			sample(fmt.Sprintf("job %d has %d indexed runs that ended with an answer", j.ID, n))
		}
		if v := verdict(members[j.ID], r.Status, r.Outcome, r.FailureCode, r.Outputs); v != "" {
			fr.Wrong++
			sample(fmt.Sprintf("job %d: %s", j.ID, v))
		}
	}
	fr.RunDuration = summarize(durs)
	return nil
}
