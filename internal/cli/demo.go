package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/model/cassette"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/browser"
)

type demoOptions struct {
	IO       *IOStreams
	Env      func(string) string
	Dir      string
	Cassette string
	DataDir  string
	Browser  string
	JSON     bool
}

func newCmdDemo(f *Factory, runF func(context.Context, *demoOptions) error) *cobra.Command {
	opts := &demoOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the verified story against the mock back office, stage by stage",
		Long: heredoc.Doc(`
			Start MemberDesk in-process on a free port and one Chromium, then replay the
			reference capabilities through every case the engine must handle: a lookup,
			business outcomes, a recovered fault, a fault past its budget, malformed
			input, an expired session, an undeclared dialog, a churned UI, a renamed
			label and an irreversible transfer without approval. One line per stage and
			a verdict; exits 0 only when every stage behaved as declared.
		`),
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.DataDir == "" {
				opts.DataDir = opts.Env("CUA_DATA_DIR")
			}
			if opts.DataDir == "" {
				opts.DataDir = ".cua"
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDemo(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "capabilities", "examples/capabilities", "directory of the reference capabilities")
	cmd.Flags().StringVar(&opts.Cassette, "cassette", "examples/cassettes/savings_balance.json", "recorded discovery of the savings-balance goal")
	cmd.Flags().StringVar(&opts.DataDir, "data-dir", "", "data directory (default $CUA_DATA_DIR or .cua)")
	cmd.Flags().StringVar(&opts.Browser, "browser", "", "Chromium executable (default $CUA_BROWSER or /usr/bin/chromium)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the stages as JSON")
	return cmd
}

// demoStage is one case of the story and what it must produce.
type demoStage struct {
	Name       string            `json:"name"`
	Capability string            `json:"capability"`
	Inputs     map[string]string `json:"inputs,omitempty"`
	Fault      string            `json:"fault,omitempty"`
	FaultCount int               `json:"fault_count,omitempty"`
	FaultAfter int               `json:"fault_after,omitempty"`
	Variant    string            `json:"variant,omitempty"`
	Gates      []string          `json:"released_gates,omitempty"`
	Irrev      bool              `json:"allow_irreversible,omitempty"`
	Approve    bool              `json:"approved,omitempty"`

	WantStatus     domain.RunStatus   `json:"want_status"`
	WantCode       domain.FailureCode `json:"want_failure_code,omitempty"`
	WantOutcome    string             `json:"want_outcome,omitempty"`
	WantOutputs    map[string]string  `json:"want_outputs,omitempty"`
	WantRecoveries int                `json:"want_recovery_attempts"`
	WantDispatches int                `json:"want_dispatches"` // -1: any
	WantLedger     int                `json:"want_ledger_entries"`
	WantNoNotice   bool               `json:"want_notice_untouched,omitempty"`

	// Results.
	Record  *domain.RunRecord `json:"record,omitempty"`
	Pass    bool              `json:"pass"`
	Problem string            `json:"problem,omitempty"`
	// Detail describes a discovery stage's result.
	Detail string `json:"detail,omitempty"`
}

const lookupCap = "memberdesk.savings_balance"

func demoStages() []*demoStage {
	member := func(id string) map[string]string { return map[string]string{"member_id": id} }
	return []*demoStage{
		{Name: "reference lookup", Capability: lookupCap, Inputs: member("12345"), WantStatus: domain.StatusSuccess,
			WantOutputs: map[string]string{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"}, WantDispatches: -1},
		{Name: "member not found", Capability: lookupCap, Inputs: member("99999"), WantStatus: domain.StatusBusinessOutcome,
			WantOutcome: "member_not_found", WantDispatches: -1},
		{Name: "closed account, zero balance", Capability: lookupCap, Inputs: member("23456"), WantStatus: domain.StatusSuccess,
			WantOutputs: map[string]string{"savings_balance": "0.00", "status": "Closed"}, WantDispatches: -1},
		{Name: "transient 502, recovered", Capability: lookupCap, Inputs: member("12345"), Fault: "transient_load", FaultCount: 1,
			WantStatus: domain.StatusSuccess, WantRecoveries: 1, WantOutputs: map[string]string{"savings_balance": "1234.56"}, WantDispatches: -1},
		{Name: "transient 502 past budget", Capability: lookupCap, Inputs: member("12345"), Fault: "transient_load", FaultCount: -1,
			WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeRecoveryExhausted, WantRecoveries: 1, WantDispatches: -1},
		{Name: "malformed input", Capability: lookupCap, Inputs: member("12a45"), WantStatus: domain.StatusFailed,
			WantCode: domain.CodeInputInvalid, WantDispatches: 0},
		{Name: "session expired, re-signed on", Capability: lookupCap, Inputs: member("12345"), Fault: "session_timeout", FaultCount: 1, FaultAfter: 1,
			WantStatus: domain.StatusSuccess, WantRecoveries: 1, WantOutputs: map[string]string{"savings_balance": "1234.56"}, WantDispatches: -1},
		{Name: "undeclared dialog, not clicked", Capability: lookupCap, Inputs: member("12345"), Fault: "undeclared_dialog", FaultCount: 1,
			WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeUnexpectedState, WantNoNotice: true, WantDispatches: -1},
		{Name: "variant b: every CSS hint dead", Capability: lookupCap, Inputs: member("12345"), Variant: "b",
			WantStatus: domain.StatusSuccess, WantOutputs: map[string]string{"savings_balance": "1234.56"}, WantDispatches: -1},
		{Name: "renamed label fails closed", Capability: lookupCap, Inputs: member("12345"), Variant: "c",
			WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeTargetNotFound, WantDispatches: -1},
		{Name: "transfer stops at its gate", Capability: "memberdesk.transfer_funds",
			Inputs:     map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
			WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeGateReached, WantDispatches: -1},
		{Name: "transfer without approval refused", Capability: "memberdesk.transfer_funds", Gates: []string{"submit"}, Irrev: true,
			Inputs:     map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
			WantStatus: domain.StatusFailed, WantCode: domain.CodeApprovalRequired, WantDispatches: -1},
		{Name: "approved transfer posts once", Capability: "memberdesk.transfer_funds", Gates: []string{"submit"}, Irrev: true, Approve: true,
			Inputs:     map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
			WantStatus: domain.StatusSuccess, WantOutputs: map[string]string{"confirmation": "TRF-0001"}, WantLedger: 1, WantDispatches: -1},
	}
}

// Demo credentials for the in-process mock app; they are secrets to the
// engine (resolved only inside dispatch, redacted everywhere).
const (
	demoOperator = "OP1001"
	demoPassword = "teller-pass-1"
)

type mapSecrets map[string]string

func (m mapSecrets) Secret(ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set", ref)
}

func runDemo(ctx context.Context, o *demoOptions) error {
	lib, err := replay.LoadDir(o.Dir)
	if err != nil {
		return err
	}
	stages := demoStages()
	for _, st := range stages {
		if _, err := lib.Lookup(st.Capability); err != nil {
			return fmt.Errorf("demo: %w (run from the repository root or pass --capabilities)", err)
		}
	}
	app, err := mockapp.New(mockapp.Options{Addr: "127.0.0.1:0", Operator: demoOperator, Password: demoPassword})
	if err != nil {
		return err
	}
	if err := app.Open(); err != nil {
		return err
	}
	defer app.Close()
	red := redact.New()
	logger := slog.New(redact.NewHandler(slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}), red))
	br, err := browser.Launch(ctx, browser.Options{ExecPath: o.Browser, Logger: logger})
	if err != nil {
		return fmt.Errorf("start browser: %w", err)
	}
	defer br.Close()
	if !o.JSON {
		fmt.Fprintf(o.IO.Out, "MemberDesk on %s; evidence under %s\n", app.URL(), filepath.Join(o.DataDir, "runs"))
	}
	ctl := &controlClient{base: app.URL()}
	if !o.JSON {
		fmt.Fprintf(o.IO.Out, "%-3s %-36s %-5s %-17s %6s  %s\n", "#", "stage", "", "status", "ms", "detail")
	}
	failed := 0
	for i, st := range stages {
		runDemoStage(ctx, st, lib, app.URL(), ctl, br, red, logger, o.DataDir)
		if !st.Pass {
			failed++
		}
		if !o.JSON {
			mark := "PASS"
			if !st.Pass {
				mark = "FAIL"
			}
			st.Detail = stageDetail(st)
			fmt.Fprintf(o.IO.Out, "%-3d %-36s %-5s %-17s %6d  %s\n", i+1, st.Name, mark, statusOf(st.Record), durationOf(st.Record), st.Detail)
		}
	}
	for _, st := range runDiscoveryStages(ctx, o, ctl, app.URL(), br, red, logger) {
		stages = append(stages, st)
		if !st.Pass {
			failed++
		}
		if !o.JSON {
			mark := "PASS"
			if !st.Pass {
				mark = "FAIL"
			}
			fmt.Fprintf(o.IO.Out, "%-3d %-36s %-5s %-17s %6d  %s\n", len(stages), st.Name, mark, statusOf(st.Record), durationOf(st.Record), st.Detail)
		}
	}
	if o.JSON {
		if err := writeJSON(o.IO.Out, map[string]any{"schema_version": JSONSchemaVersion, "stages": stages, "passed": failed == 0}); err != nil {
			return err
		}
	} else {
		if failed == 0 {
			fmt.Fprintf(o.IO.Out, "verdict: PASS (%d of %d stages behaved as declared)\n", len(stages), len(stages))
		} else {
			fmt.Fprintf(o.IO.Out, "verdict: FAIL (%d of %d stages misbehaved)\n", failed, len(stages))
		}
	}
	if failed > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

func statusOf(r *domain.RunRecord) string {
	if r == nil {
		return "-"
	}
	return string(r.Status)
}

func durationOf(r *domain.RunRecord) int64 {
	if r == nil {
		return 0
	}
	return r.DurationMS
}

func stageDetail(st *demoStage) string {
	if !st.Pass {
		return st.Problem
	}
	r := st.Record
	var parts []string
	if r.Outcome != "" {
		parts = append(parts, "outcome="+r.Outcome)
	}
	if r.FailureCode != "" {
		parts = append(parts, "code="+string(r.FailureCode))
	}
	if v, ok := r.Outputs["confirmation"]; ok {
		parts = append(parts, fmt.Sprintf("confirmation=%v", v))
	}
	if v, ok := r.Outputs["savings_balance"]; ok {
		parts = append(parts, fmt.Sprintf("balance=%v status=%v", v, r.Outputs["status"]))
	}
	parts = append(parts, fmt.Sprintf("recoveries=%d dispatches=%d drift=%.2f", r.RecoveryAttempts, r.DispatchCount, r.DriftScore))
	return strings.Join(parts, " ")
}

func runDemoStage(ctx context.Context, st *demoStage, lib *replay.DirLibrary, base string, ctl *controlClient,
	br *browser.Browser, red *redact.Redactor, logger *slog.Logger, dataDir string) {
	fail := func(format string, args ...any) { st.Pass, st.Problem = false, fmt.Sprintf(format, args...) }
	if err := ctl.post("/_control/reset", nil); err != nil {
		fail("reset mock app: %v", err)
		return
	}
	if st.Variant != "" {
		if err := ctl.post("/_control/variant", map[string]any{"variant": st.Variant}); err != nil {
			fail("set variant: %v", err)
			return
		}
	}
	if st.Fault != "" {
		if err := ctl.post("/_control/arm", map[string]any{"fault": st.Fault, "count": st.FaultCount, "after": st.FaultAfter}); err != nil {
			fail("arm fault: %v", err)
			return
		}
	}
	l, err := lib.Lookup(st.Capability)
	if err != nil {
		fail("%v", err)
		return
	}
	sess, err := br.NewSession(ctx)
	if err != nil {
		fail("open session: %v", err)
		return
	}
	defer sess.Close()
	var approval *policy.Approval
	if st.Approve {
		// The demo plays the reviewer: it approves the exact content it runs.
		approval = &policy.Approval{Capability: l.Capability.Ref(), ContentHash: l.Hash, Approver: "demo reviewer"}
	}
	rec, err := replay.Run(ctx, replay.Options{
		Capability: l, Library: lib, Inputs: st.Inputs, BaseURL: base, Surface: sess,
		Secrets:  mapSecrets{"corebank_operator": demoOperator, "corebank_password": demoPassword},
		Redactor: red, DataDir: dataDir, RunID: newRunID(), Logger: logger,
		AllowIrreversible: st.Irrev, ReleasedGates: st.Gates, Approval: approval,
	})
	if err != nil {
		fail("run: %v", err)
		return
	}
	st.Record = rec
	st.Pass = true
	switch {
	case rec.Status != st.WantStatus:
		fail("status %s (%s: %s), want %s", rec.Status, rec.FailureCode, rec.Message, st.WantStatus)
	case rec.FailureCode != st.WantCode:
		fail("failure code %q (%s), want %q", rec.FailureCode, rec.Message, st.WantCode)
	case rec.Outcome != st.WantOutcome:
		fail("outcome %q, want %q", rec.Outcome, st.WantOutcome)
	case rec.RecoveryAttempts != st.WantRecoveries:
		fail("recovery attempts %d, want %d", rec.RecoveryAttempts, st.WantRecoveries)
	case st.WantDispatches >= 0 && rec.DispatchCount != st.WantDispatches:
		fail("dispatches %d, want %d", rec.DispatchCount, st.WantDispatches)
	}
	for k, want := range st.WantOutputs {
		if got := fmt.Sprint(rec.Outputs[k]); got != want && st.Pass {
			fail("output %s = %q, want %q", k, got, want)
		}
	}
	var ledger struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if err := ctl.get("/_control/ledger", &ledger); err != nil {
		fail("read ledger: %v", err)
	} else if len(ledger.Entries) != st.WantLedger && st.Pass {
		fail("ledger has %d entries, want %d", len(ledger.Entries), st.WantLedger)
	}
	if st.WantNoNotice {
		var state struct {
			NoticeAcknowledged int `json:"notice_acknowledged"`
		}
		if err := ctl.get("/_control/state", &state); err != nil {
			fail("read state: %v", err)
		} else if state.NoticeAcknowledged != 0 && st.Pass {
			fail("the undeclared dialog was clicked through (%d)", state.NoticeAcknowledged)
		}
	}
}

// controlClient talks to the mock app's /_control API.
type controlClient struct{ base string }

var controlHTTP = &http.Client{Timeout: 5 * time.Second}

func (c *controlClient) post(path string, body any) error {
	var r io.Reader = http.NoBody
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	resp, err := controlHTTP.Post(c.base+path, "application/json", r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", path, resp.Status, b)
	}
	return nil
}

func (c *controlClient) get(path string, into any) error {
	resp, err := controlHTTP.Get(c.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// runDiscoveryStages replays the recorded discovery of the savings-balance
// goal (offline: the cassette answers, no key, no network), compiles and
// seals the trace, and replays the compiled capability (the eval run).
func runDiscoveryStages(ctx context.Context, o *demoOptions, ctl *controlClient, base string, br *browser.Browser,
	red *redact.Redactor, logger *slog.Logger) []*demoStage {
	disc := &demoStage{Name: "discovery from the cassette (no key)", Capability: "memberdesk.savings_balance_discovered"}
	comp := &demoStage{Name: "compile and seal", Capability: disc.Capability}
	eval := &demoStage{Name: "eval replay of the compiled capability", Capability: disc.Capability, WantStatus: domain.StatusSuccess}
	all := []*demoStage{disc, comp, eval}
	fail := func(from int, format string, args ...any) []*demoStage {
		for _, st := range all[from:] {
			st.Pass, st.Problem, st.Detail = false, fmt.Sprintf(format, args...), fmt.Sprintf(format, args...)
		}
		return all
	}
	if err := ctl.post("/_control/reset", nil); err != nil {
		return fail(0, "reset mock app: %v", err)
	}
	m, err := cassette.Open(o.Cassette, cassette.WithRedact(red.String))
	if err != nil {
		return fail(0, "%v", err)
	}
	out, err := discoverCompileEval(ctx, discoverParams{
		Agent: agent.Config{
			Model: m, Goal: demoGoal, BaseURL: base,
			Secrets:     mapSecrets{"corebank_operator": demoOperator, "corebank_password": demoPassword},
			SecretNames: []string{"corebank_operator", "corebank_password"}, Redactor: red, DataDir: o.DataDir,
			RunID: newRunID(), Autonomy: agent.LevelAuto, Budget: agent.Budget{MaxSteps: defaultDiscoverySteps, Deadline: 5 * time.Minute},
			Logger: logger,
		},
		Open:         func() (surface.Surface, error) { return br.NewSession(ctx) },
		Out:          filepath.Join(o.DataDir, "discovered"),
		ID:           disc.Capability,
		Version:      "1.0.0",
		ProvenanceID: "cassette-demo",
		Eval:         true,
	})
	if err != nil {
		return fail(0, "%v", err)
	}
	d := out.Discovery
	disc.Pass = d.Status == agent.StatusFinished
	disc.Detail = fmt.Sprintf("%s after %d steps, %d tokens (%s)", d.Status, d.Steps, d.Tokens, m.ID())
	if !disc.Pass {
		disc.Problem = disc.Detail + ": " + d.Reason
		return fail(1, "discovery did not finish")
	}
	comp.Pass = out.File != "" && out.ContentHash != ""
	comp.Detail = fmt.Sprintf("%s %s", out.Capability, out.ContentHash)
	if !comp.Pass {
		comp.Problem = "no sealed capability"
		return fail(2, "nothing to replay")
	}
	eval.Record = out.Eval
	eval.Pass = out.Eval != nil && out.Eval.Status == domain.StatusSuccess && fmt.Sprint(out.Eval.Outputs["savings_balance"]) == "1234.56"
	eval.Detail = stageDetail(eval)
	if !eval.Pass {
		eval.Problem = "no eval run"
		if out.Eval != nil {
			eval.Problem = fmt.Sprintf("eval run %s %s: %s", out.Eval.Status, out.Eval.FailureCode, out.Eval.Message)
		}
		eval.Detail = eval.Problem
	}
	return all
}

// demoGoal is the goal the checked-in cassette was recorded for.
const demoGoal = "Look up the savings balance, status and as-of date of member 12345"
