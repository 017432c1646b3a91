package main

// Issue 27's measurements: throughput as a ratio to the floor (the batch
// phase's floor way), the warm engine's first dispatch (the engine phase),
// and its goals judged side by side in one run.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// floorBatch is the floor way of one batch step: the bare-CDP lookup
// (floor.go) done by Sessions sessions, each its own Chromium signed on
// once, over the same number of rows.
type floorBatch struct {
	Sessions      int     `json:"sessions"`
	Rows          int     `json:"rows"`
	WallSeconds   float64 `json:"wall_seconds"`
	LookupsPerMin float64 `json:"lookups_per_min"`
	// ChromiumCPUMS is the Chromium CPU per lookup (every process of the
	// sessions' browsers), in ms.
	ChromiumCPUMS float64 `json:"chromium_cpu_ms_per_lookup"`
	Failed        int     `json:"failed"`
	Wrong         int     `json:"wrong"`
}

// throughputRatio is cua batch against the floor way at one number of
// sessions, measured in the same run.
type throughputRatio struct {
	Sessions     int     `json:"sessions"`
	Mode         string  `json:"mode"`
	CuaPerMin    float64 `json:"cua_lookups_per_min"`
	FloorPerMin  float64 `json:"floor_lookups_per_min"`
	Ratio        float64 `json:"ratio"` // cua / floor lookups per minute
	CuaCPUMS     float64 `json:"cua_chromium_cpu_ms_per_lookup"`
	FloorCPUMS   float64 `json:"floor_chromium_cpu_ms_per_lookup"`
	CPUPerLookup float64 `json:"cpu_ratio"` // cua / floor Chromium CPU per lookup
}

// runFloorBatch does rows floor lookups on n sessions; the wall time
// includes starting the browsers and signing on, as cua batch's does.
func runFloorBatch(ctx context.Context, c *config, base string, n, rows int) (floorBatch, error) {
	fb := floorBatch{Sessions: n, Rows: rows}
	start := time.Now()
	ways := make([]*floorWay, n)
	defer func() {
		for _, w := range ways {
			if w != nil {
				w.close()
			}
		}
	}()
	for i := range ways {
		w, err := newFloorWay(ctx, c, base)
		if err != nil {
			return fb, fmt.Errorf("floor session %d: %w", i, err)
		}
		ways[i] = w
	}
	var next, failed, wrong atomic.Int64
	var wg sync.WaitGroup
	for _, w := range ways {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(rows) && ctx.Err() == nil {
				_, out, err := w.lookup(ctx)
				switch {
				case err != nil:
					failed.Add(1)
				case out != want:
					wrong.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	var ticks uint64
	for _, w := range ways {
		ticks += subtreeTicks(w.chrome)
	}
	fb.WallSeconds = round(wall.Seconds(), 1)
	fb.LookupsPerMin = round(float64(rows)/wall.Minutes(), 1)
	fb.ChromiumCPUMS = round(float64(ticks)*1000/clockTicks/float64(rows), 1)
	fb.Failed, fb.Wrong = int(failed.Load()), int(wrong.Load())
	return fb, ctx.Err()
}

// runSampled runs cmd to its end, sampling its descendants (Chromium)
// every 200 ms; it returns their CPU ticks, each process counted at the
// last reading before it exited.
func runSampled(cmd *exec.Cmd) (uint64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	seen := map[int]uint64{}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			var sum uint64
			for _, v := range seen {
				sum += v
			}
			return sum, err
		case <-t.C:
			for pid, v := range sampleTree(cmd.Process.Pid, false).childrenTicks {
				seen[pid] = max(seen[pid], v)
			}
		}
	}
}

// ratios pairs each cua batch step with the floor way at its sessions.
func (br *batchResults) ratios() {
	br.Ratios = nil
	for _, s := range br.Steps {
		for _, f := range br.Floor {
			if f.Sessions != s.Sessions || f.LookupsPerMin <= 0 {
				continue
			}
			r := throughputRatio{Sessions: s.Sessions, Mode: s.Mode, CuaPerMin: s.LookupsPerMin, FloorPerMin: f.LookupsPerMin,
				Ratio: round(s.LookupsPerMin/f.LookupsPerMin, 2), CuaCPUMS: s.ChromiumCPUMS, FloorCPUMS: f.ChromiumCPUMS}
			if f.ChromiumCPUMS > 0 {
				r.CPUPerLookup = round(s.ChromiumCPUMS/f.ChromiumCPUMS, 2)
			}
			br.Ratios = append(br.Ratios, r)
		}
	}
}

// engineStart is the engine phase: `cua replay --engine` against a warm
// `cua serve`, from the process start to the first dispatched action.
type engineStart struct {
	Runs int `json:"runs"`
	// ToFirstDispatch: process start → start of the run's first dispatched
	// action (its action_dispatched event, in the engine's evidence).
	ToFirstDispatch dist     `json:"to_first_dispatch"`
	Total           dist     `json:"total"`
	Skipped         string   `json:"skipped,omitempty"`
	Method          []string `json:"method"`
}

func runEnginePhase(ctx context.Context, c *config, res *results, progress func(string, ...any)) error {
	es := &engineStart{Runs: c.cold, Method: []string{
		"bin/cua serve --workers 1 (warm sessions, --allow-origin the app) on a data dir whose catalog holds examples/capabilities/*.yaml; two untimed replays warm it (Chromium started, signed on)",
		"timed: bin/cua replay " + capabilityFile + " --input member_id=" + member + " --engine URL --json with CUA_PRINCIPAL_TOKEN the serve token; process start is taken just before fork/exec",
		"first dispatch: the run's first action_dispatched event (in the engine's <data-dir>/runs/<run-id>/events.jsonl) minus its duration_ms; total: process start → exit",
	}}
	res.Engine = es
	if !supportsFlag(ctx, c, "replay", "engine") {
		es.Skipped = "this cua replay has no --engine"
		return nil
	}
	app, err := openApp()
	if err != nil {
		return err
	}
	defer app.Close()
	tmp, err := os.MkdirTemp("", "cua-bench-engine-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	h, err := newCuaHome(ctx, c, tmp, "")
	if err != nil {
		return err
	}
	url, stop, err := startServe(ctx, h, app.URL())
	if err != nil {
		return err
	}
	defer stop()
	h.env = append(h.env, "CUA_PRINCIPAL_TOKEN=bench-serve-token")
	var first, total []float64
	for i := -2; i < c.cold; i++ {
		start := time.Now()
		out, err := h.run(ctx, "replay", filepath.Join(c.root, capabilityFile), "--input", "member_id="+member,
			"--base-url", app.URL(), "--engine", url, "--json")
		end := time.Now()
		if err != nil {
			return err
		}
		var rec struct {
			Status string `json:"status"`
			RunID  string `json:"run_id"`
		}
		if err := json.Unmarshal(out, &rec); err != nil || rec.Status != "SUCCESS" {
			return fmt.Errorf("cua replay --engine did not succeed: %s", out)
		}
		if i < 0 {
			continue
		}
		f, _, err := firstDispatches(filepath.Join(tmp, "runs", rec.RunID, "events.jsonl"))
		if err != nil && f.IsZero() {
			return err
		}
		first, total = append(first, ms(f.Sub(start))), append(total, ms(end.Sub(start)))
	}
	es.ToFirstDispatch, es.Total = summarize(first), summarize(total)
	progress("engine: cua replay --engine to first dispatch median %.1f ms, whole lookup %.1f ms", es.ToFirstDispatch.MedianMS, es.Total.MedianMS)
	return nil
}

// startServe starts bin/cua serve with one warm worker on h and returns
// its URL and how to stop it.
func startServe(ctx context.Context, h *cuaHome, base string) (string, func(), error) {
	cmd := h.command(ctx, "serve", "--addr", "127.0.0.1:0", "--workers", "1", "--token", "bench-serve-token",
		"--browser", h.c.execPath, "--allow-origin", base)
	var errOut bytes.Buffer
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return "", nil, err
	}
	pw.Close()
	stop := func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait(); pr.Close() }
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		errOut.WriteString(sc.Text() + "\n")
		if rest, ok := strings.CutPrefix(sc.Text(), "serving "); ok {
			url, _, _ := strings.Cut(rest, " ")
			go func() {
				for sc.Scan() {
				}
			}()
			return url, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("cua serve printed no address: %s", errOut.String())
}

// issue27Goals judges issue 27's goals from the phases this run measured.
func issue27Goals(res *results) []goal {
	var gs []goal
	ratio := func(name, target string, v, limit float64, ge bool, note string) {
		met := v > 0 && ((ge && v >= limit) || (!ge && v <= limit))
		m := fmt.Sprintf("%.2f×%s", v, note)
		if v <= 0 {
			m = "not measured" + note
		}
		gs = append(gs, goal{"issue 27: " + name, target, m, met})
	}
	if r := res.Replay; r != nil {
		ratio("warm lookup, default evidence, vs the floor (median)", "≤ 1.5×", r.RatioVsFloor, 1.5, false, "")
		note := ""
		if r.EvidenceNone.N == 0 {
			note = " (no --evidence-level none lookup in this run)"
		}
		ratio("warm lookup, --evidence-level none, vs the floor (median)", "≤ 1.2×", r.EvidenceNoneVsFloor, 1.2, false, note)
	}
	if s := res.Stay; s != nil {
		ratio("stay on the page (reentry, default evidence) vs the Playwright loop (median)", "≤ 1.0×", s.Ratio, 1.0, false, "")
		ratio("cua batch of the reentry capability vs the Playwright loop (lookups/min)", "≥ 1.0×", s.BatchVsPlaywright, 1.0, true,
			fmt.Sprintf(" (%.0f vs %.0f/min)", s.CuaBatchPerMin, s.PlaywrightPerMin))
	}
	if b := res.Batch; b != nil {
		for _, r := range b.Ratios {
			if r.Sessions == 4 {
				ratio(fmt.Sprintf("batch at 4 sessions (%s) vs the floor way at 4 sessions (lookups/min)", r.Mode), "≥ 0.8×", r.Ratio, 0.8, true,
					fmt.Sprintf(" (%.0f vs %.0f/min; Chromium CPU per lookup %.2f×)", r.CuaPerMin, r.FloorPerMin, r.CPUPerLookup))
			}
		}
	}
	if e := res.Engine; e != nil {
		m, met := fmt.Sprintf("%.1f ms", e.ToFirstDispatch.MedianMS), e.ToFirstDispatch.N > 0 && e.ToFirstDispatch.MedianMS <= 100
		if e.Skipped != "" {
			m = "not measured: " + e.Skipped
		}
		gs = append(gs, goal{"issue 27: cua replay --engine to the first dispatch, warm serve (median)", "≤ 100 ms", m, met})
	}
	return gs
}

// printIssue27 prints the batch's floor way and ratios and the engine
// phase.
func printIssue27(w io.Writer, res *results) {
	if b := res.Batch; b != nil && len(b.Ratios) > 0 {
		fmt.Fprintln(w, "\n### Throughput against the floor way (same sessions, same rows, one run)")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| sessions | mode | cua lookups/min | floor lookups/min | ratio | cua Chromium CPU ms/lookup | floor Chromium CPU ms/lookup | CPU ratio |")
		fmt.Fprintln(w, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, r := range b.Ratios {
			fmt.Fprintf(w, "| %d | %s | %.0f | %.0f | %.2f× | %.1f | %.1f | %.2f× |\n", r.Sessions, r.Mode, r.CuaPerMin, r.FloorPerMin, r.Ratio, r.CuaCPUMS, r.FloorCPUMS, r.CPUPerLookup)
		}
	}
	if e := res.Engine; e != nil {
		if e.Skipped != "" {
			fmt.Fprintf(w, "\n`cua replay --engine` (warm serve): not measured, %s\n", e.Skipped)
		} else {
			fmt.Fprintf(w, "\n`cua replay --engine` (warm serve), %d runs: first dispatch median %.1f ms (p95 %.1f), whole lookup median %.1f ms\n",
				e.Runs, e.ToFirstDispatch.MedianMS, e.ToFirstDispatch.P95MS, e.Total.MedianMS)
		}
	}
	if r := res.Replay; r != nil && r.EvidenceNone.N > 0 {
		fmt.Fprintf(w, "\nWarm lookup at --evidence-level none: median %.1f ms, %.2f× the floor (default evidence %.2f×)\n", r.EvidenceNone.MedianMS, r.EvidenceNoneVsFloor, r.RatioVsFloor)
	}
	if s := res.Stay; s != nil && s.CuaBatchPerMin > 0 {
		fmt.Fprintf(w, "\nStay: cua batch of %s %.0f lookups/min vs the Playwright loop's %.0f/min (%.2f×)\n", s.CuaCapability, s.CuaBatchPerMin, s.PlaywrightPerMin, s.BatchVsPlaywright)
	}
}
