// Command benchrun runs cua's benchmarks end to end and prints one table:
// the engine micro-benchmarks (go test -bench in ../..), the warm replay of
// the reference lookup side by side with Playwright and the bare-CDP floor
// (interleaved), the cold start of the real cua binary, K concurrent
// replays on one browser, the UI drift suite against the mock app's
// generated variants, `cua batch` throughput at 1 and 4 warm sessions
// (flags add 2 and 8 sessions and cold runs), a fleet of two `cua worker` processes on one
// PostgreSQL, and "stay on the page" (Playwright looping on the search page
// against cua on one warm session), and the fault model (faults.go: each
// MemberDesk write fault and a no-fault control, transfers with and
// without effect contracts, judged from the ledger). It writes every
// number to bench/results/latest.json.
//
// Run it from the module root through bench/replay.sh (make bench), which
// builds bin/cua and installs bench/node's playwright-core first:
//
//	go run ./bench/cmd/benchrun [-n 30] [-only speed,drift] [-skip scale]
//
// Numbers measured on a shared machine are noisy: compare the ratios and
// medians measured in the same run, not single times.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
)

// Phases, in the order they run.
var phases = []string{"micro", "speed", "cold", "engine", "scale", "drift", "batch", "fleet", "stay", "faults"}

// config is the command line.
type config struct {
	root          string
	out           string
	cuaBin        string
	nodeDir       string
	execPath      string
	n             int
	warmup        int
	cold          int
	scaleKs       []int
	scaleDur      time.Duration
	driftBenign   int
	driftWorkers  int
	microTime     string
	batchRows     int
	batchSessions []int
	batchModes    []string
	batchRef      string
	fleetRows     int
	stayN         int
	faultsN       int
	merge         bool
	only, skip    map[string]bool
	scaleWorker   int    // >0: run as the child of the scale phase
	scaleBase     string // child: the app URL
	scaleDataDir  string // child: evidence root
	scaleDeadline time.Duration
	timeout       time.Duration
}

func (c *config) runs(phase string) bool {
	if len(c.only) > 0 && !c.only[phase] {
		return false
	}
	return !c.skip[phase]
}

func parseConfig(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("benchrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.root, "root", ".", "module root (holds examples/ and bench/)")
	fs.StringVar(&c.out, "out", "bench/results/latest.json", "where to write the results (relative to -root; a run with -only or -skip defaults to $TMPDIR/cua-bench-partial.json)")
	fs.StringVar(&c.cuaBin, "cua", "bin/cua", "the cua binary timed by the cold-start phase (relative to -root)")
	fs.StringVar(&c.nodeDir, "node", "bench/node", "directory of the Playwright worker and its node_modules (relative to -root)")
	fs.StringVar(&c.execPath, "browser", "", "Chromium executable (default $CUA_BROWSER or /usr/bin/chromium)")
	fs.IntVar(&c.n, "n", 30, "lookups per way in the speed phase")
	fs.IntVar(&c.warmup, "warmup", 3, "untimed lookups per way before the speed phase")
	fs.IntVar(&c.cold, "cold", 5, "cold-start runs of the cua binary")
	ks := fs.String("scale", "1,2,4,8,16", "concurrent sessions of the scale phase, comma-separated")
	fs.DurationVar(&c.scaleDur, "scale-duration", 20*time.Second, "how long each scale step starts lookups")
	fs.IntVar(&c.driftBenign, "drift-benign", 24, "benign drift variants (seeds 1..N); every semantic change runs once")
	fs.IntVar(&c.driftWorkers, "drift-workers", 3, "drift variants replayed at once (each on its own app and session)")
	fs.IntVar(&c.batchRows, "batch-rows", 200, "lookup rows of the batch phase's batches at 4 sessions and more (fewer sessions run proportionally fewer, at least 25)")
	bm := fs.String("batch-modes", "warm", "the batch phase's modes (cold,warm for both): cold (--warm-ttl 0), warm (warm sessions); ignored when cua has no --warm-ttl")
	fs.StringVar(&c.batchRef, "batch-ref", lookupRef, "the capability the batch phase runs: "+lookupRef+" or "+quickRef+" (the same lookup with reentry)")
	bs := fs.String("batch-sessions", "1,4", "--sessions of the batch phase's batches, comma-separated (1,2,4,8 for the whole sweep)")
	fs.IntVar(&c.fleetRows, "fleet-rows", 100, "lookups submitted to the fleet phase's two workers")
	fs.IntVar(&c.stayN, "stay-n", 40, "timed lookups per way in the stay phase")
	fs.IntVar(&c.faultsN, "faults-n", 10, "transfers per write fault (and the no-fault control) and arm in the faults phase")
	fs.BoolVar(&c.merge, "merge", false, "keep the phases of the existing -out file this run does not run (write a partial run into latest.json)")
	fs.StringVar(&c.microTime, "micro-benchtime", "300ms", "go test -benchtime for the micro-benchmarks")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "stop everything after this long (the results so far are still written)")
	only := fs.String("only", "", "run only these phases: "+strings.Join(phases, ","))
	skip := fs.String("skip", "", "skip these phases")
	fs.IntVar(&c.scaleWorker, "scale-worker", 0, "internal: run K sessions as the scale phase's child")
	fs.StringVar(&c.scaleBase, "scale-base", "", "internal: app URL for -scale-worker")
	fs.StringVar(&c.scaleDataDir, "scale-data-dir", "", "internal: evidence root for -scale-worker")
	fs.DurationVar(&c.scaleDeadline, "scale-deadline", 0, "internal: how long -scale-worker starts lookups")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	outSet := false
	fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
	if !outSet && !c.merge && (*only != "" || *skip != "") {
		// A partial run must not replace the full results.
		c.out = filepath.Join(os.TempDir(), "cua-bench-partial.json")
	}
	var err error
	if c.only, err = phaseSet(*only); err != nil {
		return nil, fmt.Errorf("-only: %w", err)
	}
	if c.skip, err = phaseSet(*skip); err != nil {
		return nil, fmt.Errorf("-skip: %w", err)
	}
	if c.scaleKs, err = counts("-scale", *ks); err != nil {
		return nil, err
	}
	if c.batchSessions, err = counts("-batch-sessions", *bs); err != nil {
		return nil, err
	}
	for _, m := range strings.Split(*bm, ",") {
		if m = strings.TrimSpace(m); m != "cold" && m != "warm" {
			return nil, fmt.Errorf("-batch-modes %q: want cold, warm or both", *bm)
		}
		c.batchModes = append(c.batchModes, m)
	}
	switch {
	case c.n < 1:
		return nil, fmt.Errorf("-n %d: want at least 1", c.n)
	case c.cold < 1:
		return nil, fmt.Errorf("-cold %d: want at least 1", c.cold)
	case c.driftWorkers < 1:
		return nil, fmt.Errorf("-drift-workers %d: want at least 1", c.driftWorkers)
	case c.batchRef != lookupRef && c.batchRef != quickRef:
		return nil, fmt.Errorf("-batch-ref %q: want %s or %s", c.batchRef, lookupRef, quickRef)
	case c.batchRows < 1:
		return nil, fmt.Errorf("-batch-rows %d: want at least 1", c.batchRows)
	case c.fleetRows < 1:
		return nil, fmt.Errorf("-fleet-rows %d: want at least 1", c.fleetRows)
	case c.stayN < 1:
		return nil, fmt.Errorf("-stay-n %d: want at least 1", c.stayN)
	case c.faultsN < 1:
		return nil, fmt.Errorf("-faults-n %d: want at least 1", c.faultsN)
	case c.scaleDur <= 0:
		return nil, fmt.Errorf("-scale-duration %s: want a positive duration", c.scaleDur)
	}
	if c.execPath == "" {
		c.execPath = os.Getenv("CUA_BROWSER")
	}
	if c.execPath == "" {
		c.execPath = "/usr/bin/chromium"
	}
	if c.root, err = filepath.Abs(c.root); err != nil {
		return nil, err
	}
	for _, p := range []*string{&c.out, &c.cuaBin, &c.nodeDir} {
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(c.root, *p)
		}
	}
	return c, nil
}

// counts parses a comma-separated list of numbers from 1 to 64.
func counts(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var k int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &k); err != nil || k < 1 || k > 64 {
			return nil, fmt.Errorf("%s %q: want numbers from 1 to 64", flag, s)
		}
		out = append(out, k)
	}
	return out, nil
}

func phaseSet(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(phases, p) {
			return nil, fmt.Errorf("unknown phase %q; want %s", p, strings.Join(phases, ", "))
		}
		out[p] = true
	}
	return out, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.SetFlags(0)
	log.SetPrefix("benchrun: ")
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	c, err := parseConfig(args, os.Stderr)
	if err != nil {
		if err != flag.ErrHelp {
			log.Print(err)
		}
		return 2
	}
	if c.scaleWorker > 0 {
		if err := scaleChild(ctx, c, os.Stdout); err != nil {
			log.Print(err)
			return 1
		}
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := runAll(ctx, c)
	if res != nil && c.merge {
		if merr := mergeResults(c.out, res); merr != nil && err == nil {
			err = merr
		}
	}
	if res != nil {
		if werr := writeResults(c.out, res); werr != nil && err == nil {
			err = werr
		}
		printTable(os.Stdout, res)
		log.Printf("results written to %s", c.out)
	}
	if err != nil {
		log.Print(err)
		return 1
	}
	return 0
}

func runAll(ctx context.Context, c *config) (*results, error) {
	start := time.Now()
	res := newResults(c)
	progress := func(format string, args ...any) {
		log.Printf("[%5.1fs] %s", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	if busy := busyWarning(res.Machine.LoadAvgStart, res.Machine.CPUs); busy != "" {
		progress("%s", busy)
	}
	var errs []string
	do := func(phase string, f func() error) {
		if !c.runs(phase) || ctx.Err() != nil {
			return
		}
		progress("%s: start (load %s)", phase, loadAvg())
		t := time.Now()
		if err := f(); err != nil {
			errs = append(errs, phase+": "+err.Error())
			progress("%s: FAILED: %v", phase, err)
		} else {
			progress("%s: done in %.1fs", phase, time.Since(t).Seconds())
		}
		res.PhaseSeconds[phase] = round(time.Since(t).Seconds(), 1)
	}
	do("micro", func() error { return runMicro(ctx, c, res) })
	do("speed", func() error { return runSpeed(ctx, c, res, progress) })
	do("cold", func() error { return runCold(ctx, c, res) })
	do("engine", func() error { return runEnginePhase(ctx, c, res, progress) })
	do("scale", func() error { return runScale(ctx, c, res, progress) })
	do("drift", func() error { return runDrift(ctx, c, res, progress) })
	do("batch", func() error { return runBatch(ctx, c, res, progress) })
	do("fleet", func() error { return runFleet(ctx, c, res, progress) })
	do("stay", func() error { return runStay(ctx, c, res, progress) })
	do("faults", func() error { return runFaults(ctx, c, res, progress) })
	res.Machine.LoadAvgEnd = loadAvg()
	res.TotalSeconds = round(time.Since(start).Seconds(), 1)
	res.Goals = goals(res)
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err().Error())
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return res, nil
}

// writeResults writes the JSON atomically.
func writeResults(path string, res *results) error {
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// The reference lookup and the fixture member it reads.
const (
	capabilityFile = "examples/capabilities/memberdesk.savings_balance.yaml"
	member         = "12345"
)

// want is what a correct lookup of member returns (canonical forms).
var want = outputs{SavingsBalance: "1234.56", Status: "Active", AsOf: "2026-11-30"}

// outputs are the three values of the reference lookup, canonical.
type outputs struct {
	SavingsBalance string `json:"savings_balance"`
	Status         string `json:"status"`
	AsOf           string `json:"as_of"`
}

func (o outputs) String() string {
	return fmt.Sprintf("savings_balance=%s status=%s as_of=%s", o.SavingsBalance, o.Status, o.AsOf)
}

// canonical turns page texts into the capability's output forms, as its
// money and date transforms do.
func canonical(balance, status, asOf string) (outputs, error) {
	b, err := replay.Money(balance)
	if err != nil {
		return outputs{}, err
	}
	d, err := replay.Date(asOf)
	if err != nil {
		return outputs{}, err
	}
	return outputs{SavingsBalance: b, Status: strings.TrimSpace(status), AsOf: d}, nil
}

func recordOutputs(rec *domain.RunRecord) outputs {
	get := func(k string) string {
		if v, ok := rec.Outputs[k]; ok {
			return fmt.Sprint(v)
		}
		return ""
	}
	return outputs{SavingsBalance: get("savings_balance"), Status: get("status"), AsOf: get("as_of")}
}

// secrets are the mock app's operator credentials.
type secrets map[string]string

func (s secrets) Secret(ref string) (string, error) {
	if v, ok := s[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("no secret %q", ref)
}

var appSecrets = secrets{"corebank_operator": mockapp.DefaultOperator, "corebank_password": mockapp.DefaultPassword}

// engine runs the reference capability in-process, as `cua replay` does:
// library of the capability's directory, a fresh redactor per run,
// secrets from a source, evidence written under dataDir.
type engine struct {
	cap     *capability.Loaded
	lib     *replay.DirLibrary
	dataDir string
	prefix  string
	level   domain.EvidenceLevel // "" is the capability's own
	seq     atomic.Int64
}

func newEngine(root, dataDir, prefix string) (*engine, error) {
	file := filepath.Join(root, capabilityFile)
	l, err := capability.Load(file)
	if err != nil {
		return nil, err
	}
	lib, err := replay.LoadDir(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	lib.Add(l)
	return &engine{cap: l, lib: lib, dataDir: dataDir, prefix: prefix}, nil
}

// run replays the lookup of member on sess against base.
func (e *engine) run(ctx context.Context, sess surface.Surface, base string) (*domain.RunRecord, error) {
	id := fmt.Sprintf("%s-%06d", e.prefix, e.seq.Add(1))
	return replay.Run(ctx, replay.Options{
		Capability: e.cap, Library: e.lib, Inputs: map[string]string{"member_id": member},
		BaseURL: base, Surface: sess, Secrets: appSecrets, Redactor: redact.New(), DataDir: e.dataDir, RunID: id,
		EvidenceLevel: e.level,
	})
}

// openApp starts a MemberDesk on 127.0.0.1:0.
func openApp() (*mockapp.Server, error) {
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		return nil, err
	}
	if err := app.Open(); err != nil {
		return nil, err
	}
	return app, nil
}
