package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/surface/browser"
)

// replaySpeed is the speed phase: the reference lookup done three ways,
// interleaved, each on its own warm browser with its session signed on.
type replaySpeed struct {
	Lookups    int  `json:"lookups"`
	Cua        dist `json:"cua"`
	Playwright dist `json:"playwright"`
	Floor      dist `json:"floor"`
	// CuaNoEvidence is cua's engine with no evidence bundle (no data
	// directory: no event log, no masked step screenshots), to show what
	// the evidence costs and the engine's own distance to the floor.
	CuaNoEvidence     dist    `json:"cua_no_evidence"`
	NoEvidenceVsFloor float64 `json:"no_evidence_ratio_vs_floor"`
	// EvidenceNone is cua with its evidence bundle at --evidence-level none
	// (the event chain with each step's digest, no screenshot of a
	// successful read-only run); Cua is the default level (decisive).
	EvidenceNone        dist           `json:"cua_evidence_none"`
	EvidenceNoneVsFloor float64        `json:"evidence_none_ratio_vs_floor"`
	RatioVsPlaywright   float64        `json:"ratio_vs_playwright"` // cua median / Playwright median
	RatioVsFloor        float64        `json:"ratio_vs_floor"`      // cua median / floor median
	P95RatioVsPW        float64        `json:"p95_ratio_vs_playwright"`
	P95RatioVsFloor     float64        `json:"p95_ratio_vs_floor"`
	Errors              map[string]int `json:"errors"`
	// CPU is the mean CPU time per timed lookup, by way: the client (the
	// process driving the browser, plus this process, which serves the mock
	// app for all three) and the way's own Chromium processes.
	CPU    map[string]cpuUse `json:"cpu_ms_per_lookup"`
	Method []string          `json:"method"`
}

type cpuUse struct {
	Client  float64 `json:"client"`
	Browser float64 `json:"browser"`
}

// way is one way of doing the lookup. lookup returns the time of the
// lookup alone, measured in the process that does it, and its outputs.
type way interface {
	name() string
	lookup(ctx context.Context) (time.Duration, outputs, error)
	// cpu returns the CPU ticks used so far by the client and the browser.
	cpu() (client, browser uint64)
	close()
}

func runSpeed(ctx context.Context, c *config, res *results, progress func(string, ...any)) error {
	app, err := openApp()
	if err != nil {
		return err
	}
	defer app.Close()
	tmp, err := os.MkdirTemp("", "cua-bench-speed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var ways []way
	defer func() {
		for _, w := range ways {
			w.close()
		}
	}()
	cw, err := newCuaWay(ctx, c, app.URL(), filepath.Join(tmp, "cua"))
	if err != nil {
		return fmt.Errorf("cua: %w", err)
	}
	ways = append(ways, cw)
	nw, err := newCuaWay(ctx, c, app.URL(), "", cw.chrome)
	if err != nil {
		return fmt.Errorf("cua without evidence: %w", err)
	}
	nw.label = "cua-no-evidence"
	ways = append(ways, nw)
	ew, err := newCuaWay(ctx, c, app.URL(), filepath.Join(tmp, "cua-none"), cw.chrome, nw.chrome)
	if err != nil {
		return fmt.Errorf("cua at --evidence-level none: %w", err)
	}
	ew.label, ew.eng.level = "cua-evidence-none", domain.EvidenceNone
	ways = append(ways, ew)
	pw, err := newPlaywrightWay(ctx, c, app.URL())
	if err != nil {
		return fmt.Errorf("playwright: %w", err)
	}
	ways = append(ways, pw)
	fw, err := newFloorWay(ctx, c, app.URL())
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	ways = append(ways, fw)
	progress("speed: %d ways signed on; %d warm-up and %d timed lookups each, interleaved", len(ways), c.warmup, c.n)

	times := map[string][]float64{}
	errs := map[string]int{}
	ticks := map[string][2]uint64{}
	for i := -c.warmup; i < c.n; i++ {
		for k := range ways {
			// Rotate the order every round, so no way always follows another.
			w := ways[(k+max(i, 0))%len(ways)]
			c0, b0 := w.cpu()
			d, out, err := w.lookup(ctx)
			c1, b1 := w.cpu()
			if err == nil && out != want {
				err = fmt.Errorf("wrong outputs: got %s, want %s", out, want)
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				errs[w.name()]++
				progress("speed: %s lookup %d: %v", w.name(), i, err)
				if errs[w.name()] > c.n/5+1 {
					return fmt.Errorf("%s: too many failed lookups (%d)", w.name(), errs[w.name()])
				}
				continue
			}
			if i >= 0 {
				times[w.name()] = append(times[w.name()], ms(d))
				t := ticks[w.name()]
				ticks[w.name()] = [2]uint64{t[0] + c1 - min(c0, c1), t[1] + b1 - min(b0, b1)}
			}
		}
	}
	r := &replaySpeed{
		Lookups: c.n, Cua: summarize(times["cua"]), Playwright: summarize(times["playwright"]), Floor: summarize(times["floor"]),
		CuaNoEvidence: summarize(times["cua-no-evidence"]), EvidenceNone: summarize(times["cua-evidence-none"]),
		Errors: errs, CPU: map[string]cpuUse{},
		Method: []string{
			"each way has its own Chromium (/usr/bin/chromium, cua's headless flags), one isolated context, signed on once",
			"a lookup: load the frameset, click Member Search in frame nav, type the member number, click Search, read Status, Savings Balance and As of",
			"cua: replay.Run in-process as `cua replay` runs it (policy, evidence with fsync at close, redaction), timed around Run",
			"playwright: playwright-core getByRole locators in frameLocator('iframe[name=...]'), reads in parallel, timed inside node",
			"floor: chromedp, Page.navigate + load, clicks at known coordinates, Input.insertText, waits on the content frame's DOMContentLoaded, one Runtime.evaluate to read",
			"cua-no-evidence: the same engine with no data directory (no event log, no masked step screenshots)",
			"cua: the capability's default evidence level (decisive); cua-evidence-none: replay.Options.EvidenceLevel none (cua replay --evidence-level none), its bundle written",
			"rounds interleave the four ways, rotating their order; every lookup's outputs are checked",
		},
	}
	for name, t := range ticks {
		if n := len(times[name]); n > 0 {
			r.CPU[name] = cpuUse{
				Client:  round(float64(t[0])*1000/clockTicks/float64(n), 1),
				Browser: round(float64(t[1])*1000/clockTicks/float64(n), 1),
			}
		}
	}
	if r.Playwright.MedianMS > 0 {
		r.RatioVsPlaywright = round(r.Cua.MedianMS/r.Playwright.MedianMS, 2)
		r.P95RatioVsPW = round(r.Cua.P95MS/r.Playwright.P95MS, 2)
	}
	if r.Floor.MedianMS > 0 {
		r.RatioVsFloor = round(r.Cua.MedianMS/r.Floor.MedianMS, 2)
		r.P95RatioVsFloor = round(r.Cua.P95MS/r.Floor.P95MS, 2)
		r.NoEvidenceVsFloor = round(r.CuaNoEvidence.MedianMS/r.Floor.MedianMS, 2)
		r.EvidenceNoneVsFloor = round(r.EvidenceNone.MedianMS/r.Floor.MedianMS, 2)
	}
	res.Replay = r
	return nil
}

// cuaWay is cua's engine in-process on one session of its own browser.
type cuaWay struct {
	br     *browser.Browser
	sess   *browser.Session
	eng    *engine
	base   string
	chrome int    // pid of its Chromium
	label  string // its name, "cua" unless set
}

// newCuaWay starts the way's browser; skip lists the Chromium pids of
// other ways of this process, so its CPU is read from its own.
func newCuaWay(ctx context.Context, c *config, base, dataDir string, skip ...int) (*cuaWay, error) {
	eng, err := newEngine(c.root, dataDir, "speed")
	if err != nil {
		return nil, err
	}
	br, err := browser.Launch(ctx, browser.Options{ExecPath: c.execPath})
	if err != nil {
		return nil, err
	}
	sess, err := br.NewSession(ctx)
	if err != nil {
		br.Close()
		return nil, err
	}
	w := &cuaWay{br: br, sess: sess, eng: eng, base: base, chrome: childWithTMPDIR(os.Getpid(), "cua-browser-", skip...)}
	if _, _, err := w.lookup(ctx); err != nil { // signs on through the prerequisite
		w.close()
		return nil, fmt.Errorf("sign-on lookup: %w", err)
	}
	return w, nil
}

func (w *cuaWay) name() string {
	if w.label != "" {
		return w.label
	}
	return "cua"
}

func (w *cuaWay) cpu() (uint64, uint64) { return selfTicks(), subtreeTicks(w.chrome) }

func (w *cuaWay) lookup(ctx context.Context) (time.Duration, outputs, error) {
	start := time.Now()
	rec, err := w.eng.run(ctx, w.sess, w.base)
	d := time.Since(start)
	if err != nil {
		return d, outputs{}, err
	}
	if rec.Status != domain.StatusSuccess {
		return d, outputs{}, fmt.Errorf("%s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	}
	return d, recordOutputs(rec), nil
}

func (w *cuaWay) close() {
	w.sess.Close()
	w.br.Close()
}

// playwrightWay talks to bench/node/pwworker.mjs.
type playwrightWay struct {
	chrome int // pid of its Chromium
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // the worker's replies; closed when it exits
	stderr *syncBuilder
}

// syncBuilder collects a child's stderr while we may read it.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 64<<10 {
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(s.b.String())
}

// pwCallTimeout bounds one command to the worker.
const pwCallTimeout = 90 * time.Second

type pwReply struct {
	OK      bool    `json:"ok"`
	Error   string  `json:"error"`
	MS      float64 `json:"ms"`
	BackMS  float64 `json:"back_ms"`
	Outputs struct {
		SavingsBalance string `json:"savings_balance"`
		Status         string `json:"status"`
		AsOf           string `json:"as_of"`
	} `json:"outputs"`
}

func newPlaywrightWay(ctx context.Context, c *config, base string) (*playwrightWay, error) {
	script := filepath.Join(c.nodeDir, "pwworker.mjs")
	if _, err := os.Stat(filepath.Join(c.nodeDir, "node_modules", "playwright-core")); err != nil {
		return nil, fmt.Errorf("playwright-core is not installed in %s (run: npm ci --prefix %s)", c.nodeDir, c.nodeDir)
	}
	tmp, err := os.MkdirTemp("", "cua-bench-pw-")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = c.nodeDir
	// Chromium leaves a socket folder in TMPDIR. The worker launches
	// executablePath, so Playwright never needs a browser of its own.
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	stderr := &syncBuilder{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &playwrightWay{cmd: cmd, stdin: stdin, lines: make(chan string, 4), stderr: stderr}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
		_ = cmd.Wait()
		os.RemoveAll(tmp)
	}()
	if _, err := w.call(map[string]any{
		"op": "init", "base": base, "exec": c.execPath, "args": browser.Flags(),
		"operator": mockapp.DefaultOperator, "password": mockapp.DefaultPassword,
	}); err != nil {
		w.close()
		return nil, fmt.Errorf("init: %w", err)
	}
	w.chrome = childWithTMPDIR(cmd.Process.Pid, "cua-bench-pw-")
	return w, nil
}

func (w *playwrightWay) call(cmd map[string]any) (pwReply, error) {
	req, _ := json.Marshal(cmd)
	if _, err := w.stdin.Write(append(req, '\n')); err != nil {
		return pwReply{}, fmt.Errorf("write to worker: %w (stderr: %s)", err, w.stderr)
	}
	var line string
	select {
	case l, ok := <-w.lines:
		if !ok {
			return pwReply{}, fmt.Errorf("worker exited (stderr: %s)", w.stderr)
		}
		line = l
	case <-time.After(pwCallTimeout):
		_ = w.cmd.Process.Kill()
		return pwReply{}, fmt.Errorf("no reply within %s; worker killed (stderr: %s)", pwCallTimeout, w.stderr)
	}
	var r pwReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return r, fmt.Errorf("bad reply %q: %w", line, err)
	}
	if !r.OK {
		return r, errors.New(r.Error)
	}
	return r, nil
}

func (w *playwrightWay) name() string { return "playwright" }

func (w *playwrightWay) cpu() (uint64, uint64) {
	node, _ := readStat(w.cmd.Process.Pid)
	return selfTicks() + node.cpuTicks, subtreeTicks(w.chrome)
}

func (w *playwrightWay) lookup(ctx context.Context) (time.Duration, outputs, error) {
	r, err := w.call(map[string]any{"op": "lookup", "member": member})
	d := time.Duration(r.MS * float64(time.Millisecond))
	if err != nil {
		return d, outputs{}, err
	}
	out, err := canonical(r.Outputs.SavingsBalance, r.Outputs.Status, r.Outputs.AsOf)
	return d, out, err
}

func (w *playwrightWay) close() {
	line, _ := json.Marshal(map[string]any{"op": "quit"})
	_, _ = w.stdin.Write(append(line, '\n'))
	_ = w.stdin.Close()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-w.lines:
			if ok {
				continue
			}
		case <-timeout:
			_ = w.cmd.Process.Kill()
		}
		return
	}
}
