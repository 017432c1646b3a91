package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cuahq/cua/internal/jobs"
)

// batchStep is one `cua batch` of the lookup rows at one number of
// sessions, cold (every run starts a fresh browser context and signs on) or
// warm (workers keep signed-on sessions between runs).
type batchStep struct {
	Sessions   int    `json:"sessions"`
	Mode       string `json:"mode"` // "cold", "warm", or "default" when this cua has no --warm-ttl
	Capability string `json:"capability"`
	Rows       int    `json:"rows"`
	// WallSeconds: from starting bin/cua batch to its exit (browser launch,
	// queue, every row, results file); LookupsPerMin is Rows over it.
	WallSeconds   float64 `json:"wall_seconds"`
	LookupsPerMin float64 `json:"lookups_per_min"`
	// RunDuration: each row's run as its job records it (the last attempt's
	// duration_ms), for the job ids of the results file.
	RunDuration dist `json:"run_duration"`
	Done        int  `json:"done"`
	Failed      int  `json:"failed"`
	NeedsHuman  int  `json:"needs_human"`
	// Wrong: rows that ended with an answer other than the member's known
	// one (another member's balance, a wrong outcome).
	Wrong   int      `json:"wrong"`
	Samples []string `json:"samples,omitempty"`
	// ChromiumCPUMS is the Chromium CPU per lookup (the command's
	// descendants, sampled every 200 ms), in ms.
	ChromiumCPUMS float64 `json:"chromium_cpu_ms_per_lookup"`
}

// batchResults is the batch phase.
type batchResults struct {
	Steps []batchStep `json:"steps"`
	// Floor is the floor way at each number of sessions (issue27.go);
	// Ratios pairs it with each step.
	Floor  []floorBatch      `json:"floor"`
	Ratios []throughputRatio `json:"ratios"`
	Method []string          `json:"method"`
}

func runBatch(ctx context.Context, c *config, res *results, progress func(string, ...any)) error {
	app, err := openApp()
	if err != nil {
		return err
	}
	defer app.Close()
	tmp, err := os.MkdirTemp("", "cua-bench-batch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	modes := []string{"default"}
	if supportsFlag(ctx, c, "batch", "warm-ttl") {
		modes = c.batchModes
	}
	br := &batchResults{Method: []string{
		fmt.Sprintf("bin/cua batch %s --inputs lookups.csv --sessions N against an in-process MemberDesk; rows cycle members %v (answers, business outcomes and a number no member has)",
			c.batchRef, lookupMembers),
		fmt.Sprintf("%d rows at 4 sessions and more; fewer sessions get proportionally fewer (N×%d/4, at least 25) so every step takes about as long and the phase stays within minutes", c.batchRows, c.batchRows),
		"each N and mode gets its own data dir (SQLite store and queue) with examples/capabilities/*.yaml in its catalog; secrets in CUA_SECRET_*",
		"cold: --warm-ttl 0 (a fresh browser context per run, signing on each time); warm: the default --warm-ttl (signed-on sessions kept by each worker); default: this cua has no --warm-ttl",
		"lookups/min: rows over the wall time of the whole command (browser launch and sign-on included); run p50/p95: the jobs' recorded run durations",
		"wrong: every row's status, outcome and outputs checked against MemberDesk's known answer for its member; failed and needs-human rows are not wrong, they gave no answer",
		"floor way: the bare-CDP lookup (floor.go) by N sessions, each its own Chromium signed on once, over the same number of rows (the reference member on every row: the floor knows one page shape), run right after cua's steps at N; its wall time includes starting the browsers",
		"Chromium CPU per lookup: every Chromium process of the way (cua batch's descendants sampled every 200 ms, each at its last reading), over the rows; ratio: cua / floor",
	}}
	res.Batch = br
	for _, mode := range modes {
		for _, n := range c.batchSessions {
			st, err := batchStepRun(ctx, c, app.URL(), filepath.Join(tmp, fmt.Sprintf("%s-%d", mode, n)), n, mode)
			if err != nil {
				return fmt.Errorf("%s, %d sessions: %w", mode, n, err)
			}
			br.Steps = append(br.Steps, st)
			progress("batch: %s N=%d: %d rows in %.1fs, %.0f/min, run p50 %.0f p95 %.0f ms, %d failed, %d needs-human, %d wrong",
				mode, n, st.Rows, st.WallSeconds, st.LookupsPerMin, st.RunDuration.MedianMS, st.RunDuration.P95MS, st.Failed, st.NeedsHuman, st.Wrong)
		}
	}
	for _, n := range c.batchSessions {
		fb, err := runFloorBatch(ctx, c, app.URL(), n, batchRowsAt(c.batchRows, n))
		if err != nil {
			return fmt.Errorf("floor way, %d sessions: %w", n, err)
		}
		br.Floor = append(br.Floor, fb)
		progress("batch: floor N=%d: %d rows in %.1fs, %.0f/min, Chromium %.1f ms CPU per lookup, %d failed, %d wrong",
			n, fb.Rows, fb.WallSeconds, fb.LookupsPerMin, fb.ChromiumCPUMS, fb.Failed, fb.Wrong)
	}
	br.ratios()
	return nil
}

// batchStepRun runs one batch in a fresh data dir and reads its results.
func batchStepRun(ctx context.Context, c *config, base, dir string, n int, mode string) (batchStep, error) {
	st := batchStep{Sessions: n, Mode: mode, Capability: c.batchRef, Rows: batchRowsAt(c.batchRows, n)}
	h, err := newCuaHome(ctx, c, dir, "")
	if err != nil {
		return st, err
	}
	inputs := filepath.Join(dir, "lookups.csv")
	if err := writeLookupCSV(inputs, st.Rows); err != nil {
		return st, err
	}
	out := filepath.Join(dir, "results.jsonl")
	args := []string{"batch", c.batchRef, "--inputs", inputs, "--out", out, "--sessions", fmt.Sprint(n),
		"--base-url", base, "--browser", c.execPath}
	args = append(args, allowOrigin(ctx, c, "batch", base)...)
	if mode == "cold" {
		args = append(args, "--warm-ttl", "0")
	}
	start := time.Now()
	// A failed row makes the command exit 1; the results file still says
	// which, so only a missing file is an error.
	cmd := h.command(ctx, args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	ticks, runErr := runSampled(cmd)
	wall := time.Since(start)
	if runErr != nil {
		runErr = fmt.Errorf("cua batch: %w\n%s", runErr, tail(errOut.String(), 2000))
	}
	rows, err := readRowResults(out)
	if err != nil {
		if runErr != nil {
			return st, runErr
		}
		return st, err
	}
	if len(rows) != st.Rows {
		return st, fmt.Errorf("results file holds %d rows, want %d (%v)", len(rows), st.Rows, runErr)
	}
	st.WallSeconds = round(wall.Seconds(), 1)
	st.LookupsPerMin = round(float64(len(rows))/wall.Minutes(), 1)
	st.ChromiumCPUMS = round(float64(ticks)*1000/clockTicks/float64(len(rows)), 1)
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, r.JobID)
		st.judge(memberOf(r.Row-1), r)
	}
	if st.RunDuration, err = jobDurations(ctx, h, ids); err != nil {
		return st, err
	}
	return st, nil
}

// batchRowsAt is how many rows the step at n sessions runs: rows from 4
// sessions up, proportionally fewer below (at least 25, at most rows).
func batchRowsAt(rows, n int) int {
	if n >= 4 {
		return rows
	}
	return min(rows, max(25, rows*n/4))
}

// judge counts row r of member in the step.
func (st *batchStep) judge(member string, r jobs.RowResult) {
	switch r.Class() {
	case "done":
		st.Done++
	case "needs_human":
		st.NeedsHuman++
	default:
		st.Failed++
	}
	if v := verdict(member, r.Status, r.Outcome, r.FailureCode, r.Outputs); v != "" {
		if r.Class() == "done" {
			st.Wrong++
		}
		if len(st.Samples) < 5 {
			st.Samples = append(st.Samples, fmt.Sprintf("row %d (%s): %s", r.Row, r.RunID, v))
		}
	}
}

// readRowResults reads a batch's results file.
func readRowResults(path string) ([]jobs.RowResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []jobs.RowResult
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var r jobs.RowResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

// jobDurations summarises the recorded run durations of the jobs ids.
func jobDurations(ctx context.Context, h *cuaHome, ids []int64) (dist, error) {
	q, err := h.queue(ctx)
	if err != nil {
		return dist{}, err
	}
	defer q.Close()
	js, err := q.List(ctx, jobs.ListParams{IDs: ids, Limit: len(ids)})
	if err != nil {
		return dist{}, err
	}
	var ms []float64
	for _, j := range js {
		if j.Result != nil {
			ms = append(ms, float64(j.Result.DurationMS))
		}
	}
	return summarize(ms), nil
}
