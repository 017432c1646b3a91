package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cuahq/cua/internal/fsx"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// results is bench/results/latest.json.
type results struct {
	SchemaVersion int            `json:"schema_version"`
	GeneratedAt   string         `json:"generated_at"`
	Machine       machine        `json:"machine"`
	Config        map[string]any `json:"config"`
	Micro         []microResult  `json:"micro,omitempty"`
	Replay        *replaySpeed   `json:"replay,omitempty"`
	ColdStart     *coldStart     `json:"cold_start,omitempty"`
	Engine        *engineStart   `json:"engine,omitempty"`
	Scale         []scaleStep    `json:"scale,omitempty"`
	Drift         *driftResults  `json:"drift,omitempty"`
	Batch         *batchResults  `json:"batch,omitempty"`
	Fleet         *fleetResult   `json:"fleet,omitempty"`
	Stay          *stayResult    `json:"stay,omitempty"`
	Faults        *faultsResults `json:"faults,omitempty"`
	// MergedFrom names the earlier run whose phases a -merge run kept.
	MergedFrom   string             `json:"merged_from,omitempty"`
	Goals        []goal             `json:"goals"`
	PhaseSeconds map[string]float64 `json:"phase_seconds"`
	TotalSeconds float64            `json:"total_seconds"`
}

type machine struct {
	CPUs           int    `json:"cpus"`
	OS             string `json:"os"`
	Go             string `json:"go"`
	Chromium       string `json:"chromium"`
	Node           string `json:"node"`
	PlaywrightCore string `json:"playwright_core"`
	LoadAvgStart   string `json:"load_avg_start"`
	LoadAvgEnd     string `json:"load_avg_end"`
}

func newResults(c *config) *results {
	return &results{
		SchemaVersion: 1,
		GeneratedAt:   time.Now().UTC().Format(time.RFC3339),
		Machine: machine{
			CPUs:           goruntime.NumCPU(),
			OS:             goruntime.GOOS + "/" + goruntime.GOARCH,
			Go:             goruntime.Version(),
			Chromium:       commandLine(c.execPath, "--version"),
			Node:           commandLine("node", "--version"),
			PlaywrightCore: packageVersion(filepath.Join(c.nodeDir, "node_modules", "playwright-core", "package.json")),
			LoadAvgStart:   loadAvg(),
		},
		Config: map[string]any{
			"lookups": c.n, "warmup": c.warmup, "cold_runs": c.cold, "scale_sessions": c.scaleKs,
			"scale_seconds": c.scaleDur.Seconds(), "drift_benign": c.driftBenign, "drift_workers": c.driftWorkers,
			"micro_benchtime": c.microTime, "batch_rows": c.batchRows, "batch_sessions": c.batchSessions,
			"batch_modes": c.batchModes,
			"fleet_rows":  c.fleetRows, "stay_lookups": c.stayN, "fault_runs": c.faultsN,
		},
		PhaseSeconds: map[string]float64{},
	}
}

// commandLine returns the first line a short command prints that mentions
// a digit, or "".
func commandLine(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, name, args...).CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.ContainsAny(l, "0123456789") && !strings.Contains(l, "unexpected operator") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func packageVersion(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.Version
}

// loadAvg returns the 1, 5 and 15 minute load averages.
// busyWarning says when the one-minute load average in load (as loadAvg
// returns it) is above the machine's CPUs: something else is running
// (a killed bench's browsers, a test suite) and every way will be slower
// and noisier. "" when the machine looks quiet or load is unreadable.
func busyWarning(load string, cpus int) string {
	f := strings.Fields(load)
	if len(f) == 0 || cpus <= 0 {
		return ""
	}
	l1, err := strconv.ParseFloat(f[0], 64)
	if err != nil || l1 <= float64(cpus) {
		return ""
	}
	return fmt.Sprintf("warning: load average %.2f on %d CPUs at the start: other work is running, the numbers will be slower and noisier (ps aux --sort=-%%cpu shows what)", l1, cpus)
}

func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// dist summarises latencies in milliseconds.
type dist struct {
	N        int     `json:"n"`
	MedianMS float64 `json:"median_ms"`
	P95MS    float64 `json:"p95_ms"`
	MinMS    float64 `json:"min_ms"`
	MaxMS    float64 `json:"max_ms"`
	MeanMS   float64 `json:"mean_ms"`
}

// summarize returns the distribution of ms; percentiles are nearest-rank.
func summarize(ms []float64) dist {
	if len(ms) == 0 {
		return dist{}
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return dist{
		N: len(s), MedianMS: round(percentile(s, 50), 1), P95MS: round(percentile(s, 95), 1),
		MinMS: round(s[0], 1), MaxMS: round(s[len(s)-1], 1), MeanMS: round(sum/float64(len(s)), 1),
	}
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	if p == 50 && len(sorted)%2 == 0 {
		return (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	k := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// goal is one of issue 5's targets and what this run measured.
type goal struct {
	Goal     string `json:"goal"`
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// maxResultsFile bounds a file benchrun reads (a results file, a
// capability).
const maxResultsFile = 16 << 20

// mergeResults fills the phases res did not run from the results file at
// path (when there is one), keeps their phase times and judges the goals
// again over the whole.
func mergeResults(path string, res *results) error {
	raw, err := fsx.ReadFile(path, maxResultsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("-merge: %w", err)
	}
	var old results
	if err := json.Unmarshal(raw, &old); err != nil {
		return fmt.Errorf("-merge: %s: %w", path, err)
	}
	if res.Micro == nil {
		res.Micro = old.Micro
	}
	if res.Replay == nil {
		res.Replay = old.Replay
	}
	if res.ColdStart == nil {
		res.ColdStart = old.ColdStart
	}
	if res.Scale == nil {
		res.Scale = old.Scale
	}
	if res.Drift == nil {
		res.Drift = old.Drift
	}
	if res.Batch == nil {
		res.Batch = old.Batch
	}
	if res.Fleet == nil {
		res.Fleet = old.Fleet
	}
	if res.Stay == nil {
		res.Stay = old.Stay
	}
	if res.Faults == nil {
		res.Faults = old.Faults
	}
	if res.Machine.PlaywrightCore == "" {
		res.Machine.PlaywrightCore = old.Machine.PlaywrightCore // bench/node is not installed by a -only run
	}
	if res.Machine.Node == "" {
		res.Machine.Node = old.Machine.Node
	}
	var kept []string
	for phase, s := range old.PhaseSeconds {
		if _, ran := res.PhaseSeconds[phase]; !ran {
			res.PhaseSeconds[phase] = s
			kept = append(kept, phase)
		}
	}
	slices.Sort(kept)
	if len(kept) > 0 {
		res.MergedFrom = fmt.Sprintf("%s from the run of %s", strings.Join(kept, ", "), old.GeneratedAt)
	}
	res.Goals = goals(res)
	return nil
}
