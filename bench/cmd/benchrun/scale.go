package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/browser"
)

// scaleStep is K concurrent replays on one browser, one isolated context
// (session) per worker, each worker looping the lookup for the window.
type scaleStep struct {
	Sessions      int     `json:"sessions"`
	Lookups       int     `json:"lookups"`
	Failed        int     `json:"failed"`
	WindowSeconds float64 `json:"window_seconds"`
	LookupsPerMin float64 `json:"lookups_per_min"`
	Latency       dist    `json:"latency"`
	// Peak resident memory: the cua process (VmHWM) and Chromium (the
	// largest sum of VmRSS over its processes, sampled every 250 ms; shared
	// pages count once per process, so the sum overstates), and Chromium's
	// largest sum of PSS (shared pages divided among their processes,
	// sampled every second).
	CuaPeakRSSMB            float64  `json:"cua_peak_rss_mb"`
	ChromiumPeakRSSMB       float64  `json:"chromium_peak_rss_mb"`
	ChromiumPeakPSSMB       float64  `json:"chromium_peak_pss_mb"`
	ChromiumPSSPerSessionMB float64  `json:"chromium_pss_per_session_mb"`
	ChromiumProcesses       int      `json:"chromium_processes"`
	CuaRSSPerSessionMB      float64  `json:"cua_rss_per_session_mb"`
	ChromiumRSSPerSessionMB float64  `json:"chromium_rss_per_session_mb"`
	CuaCPUSeconds           float64  `json:"cua_cpu_seconds"`
	ChromiumCPUSeconds      float64  `json:"chromium_cpu_seconds"`
	CPUMSPerLookup          float64  `json:"cpu_ms_per_lookup"`
	FailureSamples          []string `json:"failure_samples,omitempty"`
}

// runScale runs one child process per K (so its memory is its own), with
// the mock app in this process.
func runScale(ctx context.Context, c *config, res *results, progress func(string, ...any)) error {
	app, err := openApp()
	if err != nil {
		return err
	}
	defer app.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, k := range c.scaleKs {
		tmp, err := os.MkdirTemp("", "cua-bench-scale-")
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, self, "-scale-worker", fmt.Sprint(k), "-scale-base", app.URL(),
			"-scale-data-dir", tmp, "-scale-deadline", c.scaleDur.String(), "-root", c.root, "-browser", c.execPath)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		os.RemoveAll(tmp)
		if err != nil {
			return fmt.Errorf("K=%d: %w", k, err)
		}
		var st scaleStep
		if err := json.Unmarshal(out, &st); err != nil {
			return fmt.Errorf("K=%d: bad child output %q: %w", k, out, err)
		}
		res.Scale = append(res.Scale, st)
		progress("scale: K=%d: %d lookups (%d failed), %.0f/min, p95 %.0f ms, cua %.0f MB, chromium %.0f MB",
			k, st.Lookups, st.Failed, st.LookupsPerMin, st.Latency.P95MS, st.CuaPeakRSSMB, st.ChromiumPeakRSSMB)
	}
	return nil
}

// scaleChild is the process of one scale step: it opens K sessions on one
// browser, signs each on (untimed), then loops lookups on all of them until
// the deadline, and writes a scaleStep as JSON to out.
func scaleChild(ctx context.Context, c *config, out io.Writer) error {
	k := c.scaleWorker
	eng, err := newEngine(c.root, c.scaleDataDir, fmt.Sprintf("scale%d", k))
	if err != nil {
		return err
	}
	br, err := browser.Launch(ctx, browser.Options{ExecPath: c.execPath})
	if err != nil {
		return err
	}
	defer br.Close()
	sessions := make([]*browser.Session, k)
	for i := range sessions {
		if sessions[i], err = br.NewSession(ctx); err != nil {
			return err
		}
		defer sessions[i].Close()
	}
	if err := signOnAll(ctx, eng, sessions, c.scaleBase); err != nil {
		return err
	}

	pid := os.Getpid()
	peaks := startPeakSampler(pid)
	before := peaks.sample(true)
	start := time.Now()
	l := runLookups(ctx, eng, sessions, c.scaleBase, start.Add(c.scaleDeadline))
	lat, failed, samples := l.lat, l.failed, l.samples
	window := time.Since(start)
	after := peaks.sample(true)
	peaks.stop()
	peakKB, peakPSS, peakProcs := peaks.kb, peaks.pss, peaks.procs
	if ctx.Err() != nil {
		return ctx.Err()
	}
	st := scaleStep{
		Sessions: k, Lookups: len(lat), Failed: failed, WindowSeconds: round(window.Seconds(), 1),
		LookupsPerMin: round(float64(len(lat))/window.Minutes(), 1), Latency: summarize(lat),
		CuaPeakRSSMB:       round(float64(statusKB(pid, "VmHWM:"))/1024, 1),
		ChromiumPeakRSSMB:  round(float64(peakKB)/1024, 1),
		ChromiumPeakPSSMB:  round(float64(peakPSS)/1024, 1),
		ChromiumProcesses:  peakProcs,
		CuaCPUSeconds:      round(float64(after.selfTicks-before.selfTicks)/clockTicks, 2),
		ChromiumCPUSeconds: round(cpuSince(before, after), 2),
		FailureSamples:     samples,
	}
	st.CuaRSSPerSessionMB = round(st.CuaPeakRSSMB/float64(k), 1)
	st.ChromiumRSSPerSessionMB = round(st.ChromiumPeakRSSMB/float64(k), 1)
	st.ChromiumPSSPerSessionMB = round(st.ChromiumPeakPSSMB/float64(k), 1)
	if len(lat) > 0 {
		st.CPUMSPerLookup = round((st.CuaCPUSeconds+st.ChromiumCPUSeconds)*1000/float64(len(lat)), 1)
	}
	w := bufio.NewWriter(out)
	if err := json.NewEncoder(w).Encode(st); err != nil {
		return err
	}
	return w.Flush()
}

// signOnAll signs every session on (the first lookup runs the
// prerequisite), concurrently.
func signOnAll(ctx context.Context, eng *engine, sessions []*browser.Session, base string) error {
	var wg sync.WaitGroup
	warmErr := make([]error, len(sessions))
	for i, s := range sessions {
		wg.Go(func() {
			rec, err := eng.run(ctx, s, base)
			if err == nil && rec.Status != domain.StatusSuccess {
				err = fmt.Errorf("%s %s: %s", rec.Status, rec.FailureCode, rec.Message)
			}
			warmErr[i] = err
		})
	}
	wg.Wait()
	for i, err := range warmErr {
		if err != nil {
			return fmt.Errorf("session %d sign-on lookup: %w", i, err)
		}
	}
	return nil
}

// peakSampler samples the process tree every 250 ms (PSS every fourth
// time) and keeps the peaks of Chromium's RSS, PSS and process count.
type peakSampler struct {
	pid     int
	mu      sync.Mutex
	kb, pss int64
	procs   int
	quit    chan struct{}
	done    chan struct{}
}

func startPeakSampler(pid int) *peakSampler {
	p := &peakSampler{pid: pid, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for i := 1; ; i++ {
			select {
			case <-t.C:
				p.sample(i%4 == 0)
			case <-p.quit:
				return
			}
		}
	}()
	return p
}

// sample takes one sample (with PSS when pss) and updates the peaks.
func (p *peakSampler) sample(pss bool) treeSample {
	s := sampleTree(p.pid, pss)
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.childRSSKB > p.kb {
		p.kb, p.procs = s.childRSSKB, s.children
	}
	p.pss = max(p.pss, s.childPSSKB)
	return s
}

// stop ends the sampling; the peaks are final once it returns.
func (p *peakSampler) stop() {
	close(p.quit)
	<-p.done
}

// lookups is what the sessions' lookup loops measured.
type lookups struct {
	lat     []float64 // ms per successful lookup
	failed  int
	samples []string // up to five failure messages
}

// runLookups runs lookups on every session until deadline (or ctx ends)
// and collects their latencies and failures.
func runLookups(ctx context.Context, eng *engine, sessions []*browser.Session, base string, deadline time.Time) lookups {
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		res lookups
	)
	for _, s := range sessions {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				rec, err := eng.run(ctx, s, base)
				d := time.Since(t0)
				if err == nil && rec.Status != domain.StatusSuccess {
					err = fmt.Errorf("%s %s: %s", rec.Status, rec.FailureCode, rec.Message)
				}
				if err == nil && recordOutputs(rec) != want {
					err = fmt.Errorf("wrong outputs: %s", recordOutputs(rec))
				}
				mu.Lock()
				if err != nil {
					res.failed++
					if len(res.samples) < 5 {
						res.samples = append(res.samples, err.Error())
					}
				} else {
					res.lat = append(res.lat, ms(d))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return res
}
