package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// The fault-model phase's reference transfer and the transfer it asks for.
// The amount has cents so that partial_save's truncation shows.
const transferFile = "examples/capabilities/memberdesk.transfer_funds.yaml"

var faultInputs = map[string]string{"member_id": member, "from_account": "Savings", "to_account": "Checking", "amount": "25.75"}

var faultWant = ledgerWant{Member: member, From: "Savings", To: "Checking", Amount: "25.75", Operator: mockapp.DefaultOperator}

// The phase's two arms.
const (
	armScreenOnly = "screen_only"
	armContracts  = "contracts"
)

// faultsResults is the fault-model phase (issue 26 item 4): each write
// fault and a no-fault control, run N times in each arm, judged from
// MemberDesk's ledger.
type faultsResults struct {
	RunsPerClass int               `json:"runs_per_class"`
	Inputs       map[string]string `json:"inputs"`
	Arms         []*faultArm       `json:"arms"`
	// ReadBack is what the contracts arm costs over the screen-only arm on
	// the no-fault control: median transfer ms and screen visits.
	ReadBack    *readBackCost `json:"read_back,omitempty"`
	Definitions []string      `json:"definitions"`
	Method      []string      `json:"method"`
}

// faultArm is one arm: the transfer with or without its effect contracts.
type faultArm struct {
	Arm         string `json:"arm"`
	Capability  string `json:"capability,omitempty"`
	ContentHash string `json:"content_hash,omitempty"`
	// Contracts counts the steps with an effects block.
	Contracts int        `json:"contracts"`
	Rows      []faultRow `json:"rows,omitempty"`
	Total     *faultRow  `json:"total,omitempty"`
	// Transfer is the replay's wall time on the no-fault control (sign-on
	// included: every run starts on a reset app).
	Transfer dist `json:"transfer_control"`
	// ScreenVisits is the median of content page loads (GET /content/…) per
	// control run; HistoryVisits of Transfer History loads.
	ScreenVisits  float64 `json:"screen_visits_control"`
	HistoryVisits float64 `json:"history_visits_control"`
	Skipped       string  `json:"skipped,omitempty"`
	runs          map[string][]faultRun
	verdicts      map[string][]string
	whys          map[string][]string
	controlMS     []float64
	visits        []float64
	history       []float64
	cap           *capability.Loaded
	gates         []string
}

// readBackCost compares the arms on the control.
type readBackCost struct {
	AddedMedianMS      float64 `json:"added_median_ms"`
	ScreenOnlyMedianMS float64 `json:"screen_only_median_ms"`
	ContractsMedianMS  float64 `json:"contracts_median_ms"`
	AddedScreenVisits  float64 `json:"added_screen_visits"`
	AddedHistoryVisits float64 `json:"added_history_visits"`
	// ContractsPerRun counts the effect contracts a transfer checks.
	ContractsPerRun int `json:"contracts_per_run"`
}

func runFaults(ctx context.Context, c *config, res *results, progress func(string, ...any)) error {
	tmp, err := os.MkdirTemp("", "cua-bench-faults-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fr := &faultsResults{RunsPerClass: c.faultsN, Inputs: faultInputs, Definitions: faultDefinitions, Method: []string{
		"engine in-process (replay.Run, as cua replay runs it: default step wait, --allow-irreversible, its gate released, an approval of the exact content), one Chromium, a fresh browser context per run, one MemberDesk reset before each run",
		"screen_only: " + transferFile + " with every effects block removed, versioned -screen-only and sealed again; contracts: the reference as it is",
		"runs interleaved: for each repetition, each class, both arms back to back, so machine load falls on both alike",
		"screen visits: MemberDesk's own request counters (GET /content/…) after each control run; history visits: GET /content/member/…/history",
	}}
	res.Faults = fr
	arms, err := faultArms(filepath.Join(c.root, transferFile), tmp)
	if err != nil {
		return err
	}
	fr.Arms = arms
	lib, err := replay.LoadDir(filepath.Join(c.root, filepath.Dir(transferFile)))
	if err != nil {
		return err
	}
	for _, a := range arms {
		if a.cap != nil {
			lib.Add(a.cap)
		}
	}
	app, err := openApp()
	if err != nil {
		return err
	}
	defer app.Close()
	br, err := browser.Launch(ctx, browser.Options{ExecPath: c.execPath})
	if err != nil {
		return err
	}
	defer br.Close()
	ctl := mockapp.NewClient(app.URL(), nil)
	for i := range c.faultsN {
		for _, class := range faultClasses {
			for _, a := range arms {
				if a.cap == nil {
					continue
				}
				if err := a.runOne(ctx, ctl, br, lib, app.URL(), filepath.Join(tmp, "data"), class, i); err != nil {
					return fmt.Errorf("%s, %s, run %d: %w", a.Arm, class, i+1, err)
				}
			}
		}
		progress("faults: repetition %d of %d done", i+1, c.faultsN)
	}
	for _, a := range arms {
		a.summarise()
	}
	fr.ReadBack = readBack(arms)
	return nil
}

// effectsLine starts a step's effects block in a capability file.
var effectsLine = regexp.MustCompile(`^(\s+)effects:`)

// faultArms loads the reference transfer as the contracts arm and writes
// a copy without its effects blocks, sealed, as the screen-only arm. With
// no effects block in the reference the contracts arm is skipped.
func faultArms(file, dir string) ([]*faultArm, error) {
	raw, err := fsx.ReadFile(file, maxResultsFile)
	if err != nil {
		return nil, err
	}
	stripped, n := stripEffects(string(raw))
	only := &faultArm{Arm: armScreenOnly}
	with := &faultArm{Arm: armContracts, Contracts: n}
	if n == 0 {
		with.Skipped = file + " declares no effect contract"
		only.cap, err = capability.Load(file)
	} else {
		only.cap, err = sealScreenOnly(stripped, filepath.Join(dir, "memberdesk.transfer_funds.screen_only.yaml"))
		if err == nil {
			with.cap, err = capability.Load(file)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, a := range []*faultArm{only, with} {
		if a.cap == nil {
			continue
		}
		a.Capability, a.ContentHash = a.cap.Capability.Ref(), a.cap.Hash
		for _, s := range a.cap.Capability.Steps {
			if s.Gate {
				a.gates = append(a.gates, s.ID)
			}
		}
	}
	return []*faultArm{only, with}, nil
}

// stripEffects removes every step's effects block (the line "effects:"
// and the lines indented under it) and returns the text and how many
// blocks it removed.
func stripEffects(text string) (string, int) {
	var out []string
	n, indent := 0, -1
	for _, line := range strings.Split(text, "\n") {
		if indent >= 0 {
			trimmed := strings.TrimLeft(line, " ")
			if trimmed == "" || len(line)-len(trimmed) > indent || strings.HasPrefix(trimmed, "- ") && len(line)-len(trimmed) == indent {
				continue
			}
			indent = -1
		}
		if m := effectsLine.FindStringSubmatch(line); m != nil {
			n++
			indent = len(m[1])
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n"), n
}

// sealScreenOnly writes text, versioned -screen-only and unsealed, to path,
// seals it and loads it.
func sealScreenOnly(text, path string) (*capability.Loaded, error) {
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "content_hash:"):
			continue
		case strings.HasPrefix(line, "version: "):
			line += "-screen-only"
		}
		kept = append(kept, line)
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o600); err != nil {
		return nil, err
	}
	if _, err := capability.Seal(path); err != nil {
		return nil, fmt.Errorf("seal the screen-only transfer: %w", err)
	}
	return capability.Load(path)
}

// runOne resets the app, arms class, runs the transfer on a fresh browser
// context and records what the ledger says.
func (a *faultArm) runOne(ctx context.Context, ctl *mockapp.Client, br *browser.Browser, lib *replay.DirLibrary, base, dataDir, class string, i int) error {
	if err := ctl.Reset(ctx); err != nil {
		return err
	}
	if class != controlClass {
		if err := ctl.Arm(ctx, class, 1, 0); err != nil {
			return err
		}
	}
	before, err := ctl.Ledger(ctx)
	if err != nil {
		return err
	}
	sess, err := br.NewSession(ctx)
	if err != nil {
		return err
	}
	cp := a.cap.Capability
	start := time.Now()
	rec, err := replay.Run(ctx, replay.Options{
		Capability: a.cap, Library: lib, Inputs: faultInputs, AllowIrreversible: true, ReleasedGates: a.gates,
		Approval: &policy.Approval{Capability: cp.Ref(), ContentHash: a.cap.Hash, Approver: "benchrun"},
		BaseURL:  base, Surface: sess, Secrets: appSecrets, Redactor: redact.New(), DataDir: dataDir,
		RunID: fmt.Sprintf("faults-%s-%s-%03d", a.Arm, class, i+1),
	})
	took := time.Since(start)
	_ = sess.Close()
	if err != nil {
		return err
	}
	st, err := ctl.State(ctx)
	if err != nil {
		return err
	}
	after, err := ctl.Ledger(ctx)
	if err != nil {
		return err
	}
	if len(after) < len(before) {
		return fmt.Errorf("the ledger shrank from %d to %d entries", len(before), len(after))
	}
	r := faultRun{Class: class, Fired: class != controlClass && st.Faults[class] < 1, Status: rec.Status,
		FailureCode: string(rec.FailureCode), New: after[len(before):]}
	if v, ok := rec.Outputs["confirmation"]; ok {
		r.Confirmation = fmt.Sprint(v)
	}
	verdict, why := judgeFault(r, faultWant)
	if why != "" && rec.Message != "" {
		why += " (cua: " + oneLine(rec.Message) + ")"
	}
	a.record(r, verdict, why)
	if class == controlClass {
		visits, history := 0, 0
		for k, n := range st.Requests {
			if strings.HasPrefix(k, "GET /content/") {
				visits += n
				if strings.HasSuffix(k, "/history") {
					history += n
				}
			}
		}
		a.controlMS = append(a.controlMS, ms(took))
		a.visits = append(a.visits, float64(visits))
		a.history = append(a.history, float64(history))
	}
	return nil
}

func (a *faultArm) record(r faultRun, verdict, why string) {
	if a.runs == nil {
		a.runs, a.verdicts, a.whys = map[string][]faultRun{}, map[string][]string{}, map[string][]string{}
	}
	a.runs[r.Class] = append(a.runs[r.Class], r)
	a.verdicts[r.Class] = append(a.verdicts[r.Class], verdict)
	a.whys[r.Class] = append(a.whys[r.Class], why)
}

// summarise fills the arm's rows, total and control timings.
func (a *faultArm) summarise() {
	if a.cap == nil {
		return
	}
	for _, class := range faultClasses {
		a.Rows = append(a.Rows, tallyRow(class, a.runs[class], a.verdicts[class], a.whys[class]))
	}
	t := totalRow(a.Rows)
	a.Total = &t
	a.Transfer = summarize(a.controlMS)
	a.ScreenVisits = percentile(sorted(a.visits), 50)
	a.HistoryVisits = percentile(sorted(a.history), 50)
}

// readBack compares the arms' control runs, or nil when one is missing.
func readBack(arms []*faultArm) *readBackCost {
	var only, with *faultArm
	for _, a := range arms {
		switch {
		case a.Arm == armScreenOnly && len(a.controlMS) > 0:
			only = a
		case a.Arm == armContracts && len(a.controlMS) > 0:
			with = a
		}
	}
	if only == nil || with == nil {
		return nil
	}
	return &readBackCost{
		ScreenOnlyMedianMS: only.Transfer.MedianMS, ContractsMedianMS: with.Transfer.MedianMS,
		AddedMedianMS:     round(with.Transfer.MedianMS-only.Transfer.MedianMS, 1),
		AddedScreenVisits: with.ScreenVisits - only.ScreenVisits, AddedHistoryVisits: with.HistoryVisits - only.HistoryVisits,
		ContractsPerRun: with.Contracts,
	}
}

func sorted(v []float64) []float64 { return slices.Sorted(slices.Values(v)) }
