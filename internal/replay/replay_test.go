package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
)

// stepWait keeps not-found and unexpected-state cases short.
const stepWait = 200 * time.Millisecond

// want is what a run must end with. Every row checks status, exit code,
// failure code, outcome, recovery attempts, dispatch count and the app's
// ledger; outputs and steps only when set.
type want struct {
	status     domain.RunStatus
	code       domain.FailureCode
	outcome    string
	recoveries int
	dispatches int
	outputs    map[string]string
	ledger     []string
	steps      []string // the ids of rec.Steps, in order
}

// spec is one run: a testdata capability (edited, then sealed) on a sim
// flow.
type spec struct {
	cap string
	// edits are old, new pairs replaced in the YAML before sealing.
	edits   []string
	app     func() *sim.Flow
	inputs  map[string]string
	prepare func(t *testing.T, b *testBundle)
	check   func(t *testing.T, b *testBundle, rec *domain.RunRecord)
	want    want
}

// testBundle is one run's world.
type testBundle struct {
	loaded *capability.Loaded
	flow   *sim.Flow
	sim    *sim.Surface
	opts   replay.Options
}

func setup(t *testing.T, sp spec) *testBundle {
	t.Helper()
	l := seal(t, sp.cap, sp.edits...)
	f := sp.app()
	s := sim.New(f)
	t.Cleanup(func() { _ = s.Close() })
	b := &testBundle{loaded: l, flow: f, sim: s, opts: replay.Options{
		Capability: l, Inputs: sp.inputs, BaseURL: base, Surface: s, Redactor: redact.New(),
		DataDir: t.TempDir(), RunID: "run-1", StepWait: stepWait,
	}}
	if sp.prepare != nil {
		sp.prepare(t, b)
	}
	return b
}

// seal copies testdata/name to a temporary directory with edits applied,
// seals it and loads it back.
func seal(t *testing.T, name string, edits ...string) *capability.Loaded {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if len(edits)%2 != 0 {
		t.Fatalf("edits of %s are not pairs", name)
	}
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("%s has no %q to edit", name, edits[i])
		}
		text = strings.ReplaceAll(text, edits[i], edits[i+1])
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	hash, err := capability.Seal(path)
	if err != nil {
		t.Fatalf("seal %s: %v", name, err)
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Sealed || l.Hash != hash || l.Capability.ContentHash != hash {
		t.Fatalf("%s did not seal: sealed=%v hash %s declared %s", name, l.Sealed, l.Hash, l.Capability.ContentHash)
	}
	return l
}

func (b *testBundle) run(t *testing.T) *domain.RunRecord {
	t.Helper()
	// Only a hung run meets this deadline; it is generous for a loaded
	// 2-core CI machine, and a passing run never waits for it.
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	rec, err := replay.Run(ctx, b.opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rec
}

func checkRecord(t *testing.T, rec *domain.RunRecord, w want) {
	t.Helper()
	if rec.Status != w.status {
		t.Errorf("status %s (%s: %s), want %s", rec.Status, rec.FailureCode, rec.Message, w.status)
	}
	if rec.ExitCode != w.status.ExitCode() {
		t.Errorf("exit code %d, want %d", rec.ExitCode, w.status.ExitCode())
	}
	if rec.FailureCode != w.code {
		t.Errorf("failure code %q (%s), want %q", rec.FailureCode, rec.Message, w.code)
	}
	if rec.Outcome != w.outcome {
		t.Errorf("outcome %q, want %q", rec.Outcome, w.outcome)
	}
	if rec.RecoveryAttempts != w.recoveries {
		t.Errorf("recovery attempts %d, want %d", rec.RecoveryAttempts, w.recoveries)
	}
	if rec.DispatchCount != w.dispatches {
		t.Errorf("dispatches %d, want %d", rec.DispatchCount, w.dispatches)
	}
	for k, v := range w.outputs {
		if got := fmt.Sprint(rec.Outputs[k]); got != v {
			t.Errorf("output %s = %q, want %q", k, got, v)
		}
	}
	if w.status != domain.StatusSuccess && len(rec.Outputs) > 0 {
		t.Errorf("a %s run returned outputs %v", rec.Status, rec.Outputs)
	}
	if w.steps != nil {
		var got []string
		for _, s := range rec.Steps {
			got = append(got, s.ID)
		}
		if !slices.Equal(got, w.steps) {
			t.Errorf("steps %q, want %q", got, w.steps)
		}
	}
}

// checkEvidence compares record.json with the returned record and checks
// that the event log ends with run_finished.
func checkEvidence(t *testing.T, b *testBundle, rec *domain.RunRecord) {
	t.Helper()
	dir := filepath.Join(b.opts.DataDir, "runs", b.opts.RunID)
	raw, err := os.ReadFile(filepath.Join(dir, "record.json"))
	if err != nil {
		t.Fatalf("record.json: %v", err)
	}
	var disk domain.RunRecord
	if err := json.Unmarshal(raw, &disk); err != nil {
		t.Fatalf("record.json: %v", err)
	}
	if disk.Status != rec.Status || disk.FailureCode != rec.FailureCode || disk.DispatchCount != rec.DispatchCount ||
		disk.ContentHash != b.loaded.Hash || disk.RecoveryAttempts != rec.RecoveryAttempts {
		t.Errorf("record.json says %s/%s/%d dispatches/%s, the run %s/%s/%d/%s",
			disk.Status, disk.FailureCode, disk.DispatchCount, disk.ContentHash, rec.Status, rec.FailureCode, rec.DispatchCount, b.loaded.Hash)
	}
	validateEventLog(t, dir)
	events := readEvents(t, dir)
	if len(events) == 0 || events[len(events)-1].Type != "run_finished" {
		t.Errorf("the event log does not end with run_finished: %d events", len(events))
	}
}

type event struct {
	Type   string         `json:"type"`
	StepID string         `json:"step_id"`
	Data   map[string]any `json:"data"`
}

func readEvents(t *testing.T, dir string) []event {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	var out []event
	for line := range strings.Lines(string(raw)) {
		var e event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// afterDispatch calls hook right after the nth dispatch reaches the
// surface (a lease thief, a crash).
type afterDispatch struct {
	surface.Surface
	n     int32
	hook  func()
	count atomic.Int32
}

func (a *afterDispatch) Dispatch(ctx context.Context, act policy.AuthorizedAction) (surface.Result, error) {
	r, err := a.Surface.Dispatch(ctx, act)
	if a.count.Add(1) == a.n {
		a.hook()
	}
	return r, err
}

// secrets is a map secret source.
type secrets map[string]string

func (s secrets) Secret(ref string) (string, error) {
	if v, ok := s[ref]; ok {
		return v, nil
	}
	return "", errors.New("no secret " + ref)
}

func member(id string) map[string]string { return map[string]string{"member_id": id} }

func lookup(c lookupConf) func() *sim.Flow { return func() *sim.Flow { return lookupApp(c) } }

// notEscalated drops every trigger but one the row cannot hit.
var notEscalated = []string{
	"triggers: [RECOVERY_EXHAUSTED, UNEXPECTED_STATE, TARGET_NOT_FOUND, TARGET_AMBIGUOUS]",
	"triggers: [GATE_REACHED]",
}

// TestLookup covers DESIGN.md's result table on the lookup capability:
// expected, business outcome, recoverable, exhausted, not found, ambiguous,
// unexpected state (escalated and not), and the fail-closed refusals.
func TestLookup(t *testing.T) {
	t.Parallel()
	lookupSteps := []string{"enter_member", "search", "read_status", "read_balance", "read_as_of"}
	rows := []struct {
		name string
		spec
	}{
		{"expected: typed outputs through money and date transforms", spec{
			app: lookup(lookupConf{}), inputs: member("12345"),
			want: want{status: domain.StatusSuccess, dispatches: 3, steps: lookupSteps,
				outputs: map[string]string{"status": "Active", "balance": "1234.56", "as_of": "2026-11-30"}},
		}},
		{"expected: negative amount and ISO date", spec{
			app: lookup(lookupConf{status: "Closed", balance: "-$5.00", asOf: "2026-01-02"}), inputs: member("23456"),
			want: want{status: domain.StatusSuccess, dispatches: 3,
				outputs: map[string]string{"status": "Closed", "balance": "-5.00", "as_of": "2026-01-02"}},
		}},
		{"expected: USD prefix and zero", spec{
			app: lookup(lookupConf{balance: "USD 0.00"}), inputs: member("23456"),
			want: want{status: domain.StatusSuccess, dispatches: 3, outputs: map[string]string{"balance": "0.00"}},
		}},
		{"business outcome: member not found", spec{
			app: lookup(lookupConf{}), inputs: member("99999"),
			check: func(t *testing.T, _ *testBundle, rec *domain.RunRecord) {
				if rec.Returns["reason"] != "no such member" {
					t.Errorf("returns %v", rec.Returns)
				}
			},
			want: want{status: domain.StatusBusinessOutcome, outcome: "member_not_found", dispatches: 3},
		}},
		{"recoverable: 502 on the first load, reload within budget", spec{
			app: lookup(lookupConf{entryFaults: 1}), inputs: member("12345"),
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: 4, outputs: map[string]string{"balance": "1234.56"}},
		}},
		{"recovery exhausted: escalated", spec{
			app: lookup(lookupConf{entryFaults: -1}), inputs: member("12345"),
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeRecoveryExhausted, recoveries: 1, dispatches: 2},
		}},
		{"recovery exhausted: not escalated", spec{
			edits: notEscalated, app: lookup(lookupConf{entryFaults: -1}), inputs: member("12345"),
			want: want{status: domain.StatusFailed, code: domain.CodeRecoveryExhausted, recoveries: 1, dispatches: 2},
		}},
		{"target not found: escalated", spec{
			app: lookup(lookupConf{searchLabel: "Find"}), inputs: member("12345"),
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeTargetNotFound, dispatches: 2, steps: []string{"enter_member", "search"}},
		}},
		{"target not found: not escalated", spec{
			edits: notEscalated, app: lookup(lookupConf{searchLabel: "Find"}), inputs: member("12345"),
			want: want{status: domain.StatusFailed, code: domain.CodeTargetNotFound, dispatches: 2},
		}},
		{"target ambiguous: a Search button in two frames, escalated", spec{
			app: lookup(lookupConf{secondSearch: true}), inputs: member("12345"),
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeTargetAmbiguous, dispatches: 2},
		}},
		{"target ambiguous: not escalated", spec{
			edits: notEscalated, app: lookup(lookupConf{secondSearch: true}), inputs: member("12345"),
			want: want{status: domain.StatusFailed, code: domain.CodeTargetAmbiguous, dispatches: 2},
		}},
		{"target ambiguous: scoped to a frame, resolves", spec{
			edits: []string{"target: {role: button, name: Search}", "target: {role: button, name: Search, scope: {frame: side}}"},
			app:   lookup(lookupConf{secondSearch: true}), inputs: member("12345"),
			want: want{status: domain.StatusSuccess, dispatches: 3},
		}},
		{"unexpected state: undeclared dialog at entry is not touched", spec{
			app:    lookup(lookupConf{entryDialog: &domain.Dialog{Type: "confirm", Message: "Session notice"}}),
			inputs: member("12345"),
			check:  noDialogClicks,
			want:   want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 1},
		}},
		{"unexpected state: undeclared dialog after the search is not touched", spec{
			app:    lookup(lookupConf{afterSearch: []sim.Effect{sim.OpenDialog("alert", "Record locked by another user")}}),
			inputs: member("12345"),
			check:  noDialogClicks,
			want:   want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 3},
		}},
		{"unexpected state: undeclared dialog, not escalated", spec{
			edits:  notEscalated,
			app:    lookup(lookupConf{entryDialog: &domain.Dialog{Type: "confirm", Message: "Session notice"}}),
			inputs: member("12345"),
			check:  noDialogClicks,
			want:   want{status: domain.StatusFailed, code: domain.CodeUnexpectedState, dispatches: 1},
		}},
		{"declared dialog is answered by its step", spec{
			edits: []string{"steps:\n", "steps:\n" +
				"  - id: dismiss_notice\n    action: click\n    target: {role: button, name: Cancel}\n" +
				"    precondition:\n      node_exists: {role: alertdialog, name: Session notice}\n"},
			app:    lookup(lookupConf{entryDialog: &domain.Dialog{Type: "confirm", Message: "Session notice"}}),
			inputs: member("12345"),
			check: func(t *testing.T, b *testBundle, _ *domain.RunRecord) {
				if n := b.flow.Count("button", "Cancel"); n != 1 {
					t.Errorf("Cancel clicked %d times, want 1", n)
				}
			},
			want: want{status: domain.StatusSuccess, dispatches: 4, outputs: map[string]string{"balance": "1234.56"}},
		}},
		{"unexpected state: precondition does not hold", spec{
			edits: []string{"target: {role: button, name: Search}\n",
				"target: {role: button, name: Search}\n    precondition:\n      text_present: Ready to search\n"},
			app: lookup(lookupConf{}), inputs: member("12345"),
			check: func(t *testing.T, b *testBundle, _ *domain.RunRecord) {
				if n := b.flow.Count("button", "Search"); n != 0 {
					t.Errorf("Search clicked %d times", n)
				}
			},
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 2},
		}},
		{"checkpoint does not hold at the end", spec{
			edits: []string{"    node_exists: {role: heading, name: Member Details}\noutcomes:", "    node_exists: {role: heading, name: Account Summary}\noutcomes:"},
			app:   lookup(lookupConf{}), inputs: member("12345"),
			want: want{status: domain.StatusFailed, code: domain.CodeCheckpointFailed, dispatches: 3},
		}},
		{"domain not allowed: entrypoint off the allowlist, nothing dispatched", spec{
			edits: []string{`allowed_domains: ["127.0.0.1"]`, `allowed_domains: ["bank.example"]`},
			app:   lookup(lookupConf{}), inputs: member("12345"),
			check: nothingReachedTheApp,
			want:  want{status: domain.StatusFailed, code: domain.CodeDomainNotAllowed, dispatches: 0},
		}},
		{"domain not allowed: the app lands on another host", spec{
			app: lookup(lookupConf{detailsURL: "http://evil.example/details"}), inputs: member("12345"),
			want: want{status: domain.StatusFailed, code: domain.CodeDomainNotAllowed, dispatches: 3},
		}},
		{"lease lost mid-run: the next action never reaches the app", spec{
			app: lookup(lookupConf{}), inputs: member("12345"),
			prepare: func(t *testing.T, b *testBundle) {
				lease := hitl.NewLease("automation:test")
				b.opts.Lease, b.opts.Holder = lease, "automation:test"
				b.opts.Surface = &afterDispatch{Surface: b.sim, n: 2, hook: func() { lease.Transfer("human:operator") }}
			},
			check: func(t *testing.T, b *testBundle, _ *domain.RunRecord) {
				if n := b.flow.Count("button", "Search"); n != 0 {
					t.Errorf("Search clicked %d times after the lease moved", n)
				}
			},
			want: want{status: domain.StatusFailed, code: domain.CodeLeaseLost, dispatches: 2},
		}},
		{"lease held by someone else from the start", spec{
			app: lookup(lookupConf{}), inputs: member("12345"),
			prepare: func(t *testing.T, b *testBundle) {
				b.opts.Lease, b.opts.Holder = hitl.NewLease("human:operator"), "automation:test"
			},
			check: nothingReachedTheApp,
			want:  want{status: domain.StatusFailed, code: domain.CodeLeaseLost, dispatches: 0},
		}},
		{"input invalid: too short", spec{
			app: lookup(lookupConf{}), inputs: member("1234"), check: nothingReachedTheApp,
			want: want{status: domain.StatusFailed, code: domain.CodeInputInvalid, dispatches: 0},
		}},
		{"input invalid: padded", spec{
			app: lookup(lookupConf{}), inputs: member("12345 "), check: nothingReachedTheApp,
			want: want{status: domain.StatusFailed, code: domain.CodeInputInvalid, dispatches: 0},
		}},
		{"input invalid: missing", spec{
			app: lookup(lookupConf{}), inputs: map[string]string{}, check: nothingReachedTheApp,
			want: want{status: domain.StatusFailed, code: domain.CodeInputInvalid, dispatches: 0},
		}},
		{"input invalid: unknown input", spec{
			app: lookup(lookupConf{}), inputs: map[string]string{"member_id": "12345", "branch": "7"}, check: nothingReachedTheApp,
			want: want{status: domain.StatusFailed, code: domain.CodeInputInvalid, dispatches: 0},
		}},
		{"input invalid: base URL is not http(s)", spec{
			app: lookup(lookupConf{}), inputs: member("12345"), check: nothingReachedTheApp,
			prepare: func(t *testing.T, b *testBundle) { b.opts.BaseURL = "file:///etc" },
			want:    want{status: domain.StatusFailed, code: domain.CodeInputInvalid, dispatches: 0},
		}},
		{"budget exceeded: max_steps", spec{
			edits: []string{"max_steps: 30", "max_steps: 2"}, app: lookup(lookupConf{}), inputs: member("12345"),
			want: want{status: domain.StatusFailed, code: domain.CodeBudgetExceeded, dispatches: 3},
		}},
		{"timeout: max_duration_ms ends a run that waits", spec{
			edits: []string{
				"max_duration_ms: 20000", "max_duration_ms: 1000",
				"target: {role: button, name: Search}\n",
				"target: {role: button, name: Search}\n    precondition:\n      text_present: Ready to search\n",
			},
			app: lookup(lookupConf{}), inputs: member("12345"),
			// The step would wait 30 s for its screen; the run's 1 s budget
			// ends it first. 10 s tells the two apart with room for a
			// loaded CI machine.
			prepare: func(t *testing.T, b *testBundle) { b.opts.StepWait = 30 * time.Second },
			check: func(t *testing.T, _ *testBundle, rec *domain.RunRecord) {
				if rec.DurationMS > 10000 {
					t.Errorf("the run took %d ms past its 1 s budget", rec.DurationMS)
				}
			},
			want: want{status: domain.StatusFailed, code: domain.CodeTimeout, dispatches: 2},
		}},
		{"surface crash after a dispatch", spec{
			app: lookup(lookupConf{}), inputs: member("12345"),
			prepare: func(t *testing.T, b *testBundle) {
				b.opts.Surface = &afterDispatch{Surface: b.sim, n: 2, hook: b.sim.Crash}
			},
			want: want{status: domain.StatusFailed, code: domain.CodeSurfaceCrashed, dispatches: 2},
		}},
		{"output invalid: not in its enum", spec{
			app: lookup(lookupConf{status: "Frozen"}), inputs: member("12345"),
			want: want{status: domain.StatusFailed, code: domain.CodeOutputInvalid, dispatches: 3},
		}},
		{"output invalid: money transform refuses 1.234,56 €", spec{
			app: lookup(lookupConf{balance: "1.234,56 €"}), inputs: member("12345"),
			check: func(t *testing.T, _ *testBundle, rec *domain.RunRecord) {
				if !strings.Contains(rec.Message, "read_balance") {
					t.Errorf("message %q does not name the step", rec.Message)
				}
			},
			want: want{status: domain.StatusFailed, code: domain.CodeOutputInvalid, dispatches: 3},
		}},
		{"output invalid: date transform refuses 30.11.2026", spec{
			app: lookup(lookupConf{asOf: "30.11.2026"}), inputs: member("12345"),
			want: want{status: domain.StatusFailed, code: domain.CodeOutputInvalid, dispatches: 3},
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.cap = "lookup.yaml"
			runRow(t, r.spec)
		})
	}
}

func runRow(t *testing.T, sp spec) {
	t.Helper()
	b := setup(t, sp)
	rec := b.run(t)
	checkRecord(t, rec, sp.want)
	if got := b.flow.Ledger(); !slices.Equal(got, sp.want.ledger) {
		t.Errorf("ledger %q, want %q", got, sp.want.ledger)
	}
	checkEvidence(t, b, rec)
	if sp.check != nil {
		sp.check(t, b, rec)
	}
}

func noDialogClicks(t *testing.T, b *testBundle, _ *domain.RunRecord) {
	t.Helper()
	for _, name := range []string{"OK", "Cancel"} {
		if n := b.flow.Count("button", name); n != 0 {
			t.Errorf("the undeclared dialog's %s was clicked %d times", name, n)
		}
	}
}

func nothingReachedTheApp(t *testing.T, b *testBundle, _ *domain.RunRecord) {
	t.Helper()
	if n := len(b.sim.Actions()); n != 0 {
		t.Errorf("%d actions reached the surface", n)
	}
	if h := b.flow.Handled(); len(h) != 0 {
		t.Errorf("the app handled %+v", h)
	}
}

// TestTransfer covers gates and the policy chokepoint: an undeclared risky
// control, irreversible actions without opt-in or approval, and an approval
// bound to the exact content hash.
func TestTransfer(t *testing.T) {
	t.Parallel()
	amount := map[string]string{"amount": "25"}
	app := func() *sim.Flow { return transferApp("TRF-0001") }
	approve := func(irreversible bool, hash func(b *testBundle) string) func(t *testing.T, b *testBundle) {
		return func(t *testing.T, b *testBundle) {
			b.opts.ReleasedGates = []string{"submit"}
			b.opts.AllowIrreversible = irreversible
			if hash != nil {
				b.opts.Approval = &policy.Approval{Capability: "test.transfer@1.0.0", ContentHash: hash(b), Approver: "reviewer"}
			}
		}
	}
	own := func(b *testBundle) string { return b.loaded.Hash }
	other := func(*testBundle) string { return "sha256:" + strings.Repeat("0", 64) }
	rows := []struct {
		name string
		spec
	}{
		{"gate reached: the submit waits for review", spec{
			app: app, inputs: amount,
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeGateReached, dispatches: 1 + 1, steps: []string{"enter_amount"}},
		}},
		{"gate released, irreversible without opt-in", spec{
			app: app, inputs: amount, prepare: approve(false, own),
			want:  want{status: domain.StatusFailed, code: domain.CodeApprovalRequired, dispatches: 0},
			check: refusedUpFront,
		}},
		{"gate released, opt-in without an approval", spec{
			app: app, inputs: amount, prepare: approve(true, nil),
			want:  want{status: domain.StatusFailed, code: domain.CodeApprovalRequired, dispatches: 0},
			check: refusedUpFront,
		}},
		{"gate released, approval of other content", spec{
			app: app, inputs: amount, prepare: approve(true, other),
			want:  want{status: domain.StatusFailed, code: domain.CodeApprovalRequired, dispatches: 0},
			check: refusedUpFront,
		}},
		{"approved transfer posts exactly once", spec{
			app: app, inputs: amount, prepare: approve(true, own),
			want: want{status: domain.StatusSuccess, dispatches: 3, ledger: []string{"transfer 25.00"},
				outputs: map[string]string{"confirmation": "TRF-0001"}},
		}},
		{"policy denied: a step declared safe clicks Submit transfer", spec{
			edits: []string{"risk: irreversible", "risk: safe"},
			app:   app, inputs: amount, prepare: approve(true, own),
			check: func(t *testing.T, _ *testBundle, rec *domain.RunRecord) {
				if !strings.Contains(rec.Message, "Submit transfer") {
					t.Errorf("message %q does not name the control", rec.Message)
				}
			},
			want: want{status: domain.StatusFailed, code: domain.CodePolicyDenied, dispatches: 2},
		}},
		{"output invalid: confirmation breaks its pattern after the posting", spec{
			app: func() *sim.Flow { return transferApp("PENDING") }, inputs: amount, prepare: approve(true, own),
			want: want{status: domain.StatusFailed, code: domain.CodeOutputInvalid, dispatches: 3, ledger: []string{"transfer 25.00"}},
		}},
		{"input invalid: grouped amount", spec{
			app: app, inputs: map[string]string{"amount": "1,000"}, check: nothingReachedTheApp,
			want: want{status: domain.StatusFailed, code: domain.CodeInputInvalid},
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.cap = "transfer.yaml"
			runRow(t, r.spec)
		})
	}
}

// TestJournal covers recovery mid-run, re-anchoring and invariant 12: a
// checkpoint step is never repeated.
func TestJournal(t *testing.T) {
	t.Parallel()
	in := map[string]string{"memo": "rent", "note": "march"}
	// finishFaults: the first Finish answers 502 on the page shown after
	// goto ("" stays on the Finish page).
	finishFaults := func(gotoFirst string) []sim.Effect {
		first := []sim.Effect{sim.Fault(502)}
		if gotoFirst != "" {
			first = []sim.Effect{sim.Goto(gotoFirst), sim.Fault(502)}
		}
		return []sim.Effect{sim.Nth(1, first...), sim.From(2, sim.Goto("finished"))}
	}
	noCheckpoint := []string{"    checkpoint: true\n", "    checkpoint: false\n"}
	postedOnce := func(t *testing.T, b *testBundle, _ *domain.RunRecord) {
		if n := b.flow.Count("button", "Post entry"); n != 1 {
			t.Errorf("Post entry clicked %d times, want 1", n)
		}
	}
	rows := []struct {
		name string
		spec
	}{
		{"expected", spec{
			app: func() *sim.Flow { return journalApp(nil, nil) },
			want: want{status: domain.StatusSuccess, dispatches: 5, ledger: []string{"posted rent"},
				steps: []string{"memo", "post", "note", "finish"}},
		}},
		{"recovery re-anchors to the first step after the checkpoint on the page showing again", spec{
			app:   func() *sim.Flow { return journalApp(nil, finishFaults("")) },
			check: postedOnce,
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: 8, ledger: []string{"posted rent"},
				steps: []string{"memo", "post", "note", "finish", "note", "finish"}},
		}},
		{"checkpoint is never repeated: the app fell back to the posting page", spec{
			app:   func() *sim.Flow { return journalApp(nil, finishFaults("entry")) },
			check: postedOnce,
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeTargetNotFound, recoveries: 1, dispatches: 6,
				ledger: []string{"posted rent"}, steps: []string{"memo", "post", "note", "finish", "finish"}},
		}},
		// Before re-anchoring stopped at elevated steps already passed, this
		// row posted twice (the run went back to memo and posted again).
		{"without the checkpoint flag an elevated post already passed is still never repeated", spec{
			edits: noCheckpoint,
			app:   func() *sim.Flow { return journalApp(nil, finishFaults("entry")) },
			check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
				postedOnce(t, b, rec)
				events := readEvents(t, filepath.Join(b.opts.DataDir, "runs", b.opts.RunID))
				if slices.ContainsFunc(events, func(e event) bool { return e.Type == "reanchored" && e.StepID == "memo" }) {
					t.Error("re-anchored to memo, before the elevated post")
				}
			},
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeTargetNotFound, recoveries: 1, dispatches: 6,
				ledger: []string{"posted rent"}, steps: []string{"memo", "post", "note", "finish", "finish"}},
		}},
		{"a checkpoint step whose effect landed before a 502 is not repeated: its postcondition holds after the reload", spec{
			app:   func() *sim.Flow { return journalApp([]sim.Effect{sim.Nth(1, sim.Fault(502))}, nil) },
			check: postedOnce,
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: 6,
				ledger: []string{"posted rent"}, steps: []string{"memo", "post", "post", "note", "finish"}},
		}},
		{"an elevated step whose result is unknown after a remedy is never sent again", spec{
			app: func() *sim.Flow {
				return journalApp([]sim.Effect{sim.Nth(1, sim.Goto("entry"), sim.Fault(502))}, nil)
			},
			check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
				postedOnce(t, b, rec)
				wantEffect(t, rec, "post", domain.EffectSentUnconfirmed)
				if !strings.HasPrefix(rec.Message, "EFFECT SENT, UNCONFIRMED: step post (elevated)") {
					t.Errorf("message %q does not lead with the unconfirmed effect", rec.Message)
				}
			},
			// The reload shows the posting page again: the run re-anchors to
			// memo (safe, typed again), then refuses to send post twice.
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeEffectUnknown, recoveries: 1, dispatches: 5,
				ledger: []string{"posted rent"}, steps: []string{"memo", "post", "memo"}},
		}},
		{"recovery exhausted mid-run", spec{
			app:   func() *sim.Flow { return journalApp(nil, []sim.Effect{sim.Fault(502)}) },
			check: postedOnce,
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeRecoveryExhausted, recoveries: 2, dispatches: 11,
				ledger: []string{"posted rent"}},
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.cap = "journal.yaml"
			if r.inputs == nil {
				r.inputs = in
			}
			runRow(t, r.spec)
		})
	}
}

// TestSecrets: a $secret reaches the app and nothing else; sensitive
// inputs are masked.
func TestSecrets(t *testing.T) {
	t.Parallel()
	const (
		password = "Canary-5f2c-Pw!x"
		operator = "op-canary-7731"
	)
	rows := []struct {
		name string
		spec
	}{
		{"secret typed, never recorded", spec{
			app: func() *sim.Flow { return signonApp(operator, password) },
			prepare: func(t *testing.T, b *testBundle) {
				b.opts.Secrets = secrets{"corebank_password": password}
			},
			check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
				if !slices.ContainsFunc(b.flow.Handled(), func(h sim.Handled) bool { return h.Name == "Password" && h.Text == password }) {
					t.Error("the secret never reached the app")
				}
				noLeak(t, b, rec, password, operator)
			},
			want: want{status: domain.StatusSuccess, dispatches: 4},
		}},
		{"secret unavailable", spec{
			app: func() *sim.Flow { return signonApp(operator, password) },
			prepare: func(t *testing.T, b *testBundle) {
				b.opts.Secrets = secrets{}
			},
			check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
				if n := b.flow.Count("textbox", "Password"); n != 0 {
					t.Errorf("Password typed %d times", n)
				}
				noLeak(t, b, rec, operator)
			},
			want: want{status: domain.StatusFailed, code: domain.CodeSecretUnavailable, dispatches: 2},
		}},
		{"wrong secret: the app refuses, the run fails closed", spec{
			app: func() *sim.Flow { return signonApp(operator, password) },
			prepare: func(t *testing.T, b *testBundle) {
				b.opts.Secrets = secrets{"corebank_password": "Wrong-" + password}
			},
			check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
				noLeak(t, b, rec, "Wrong-"+password, operator)
			},
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 4},
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.cap, r.inputs = "signon.yaml", map[string]string{"operator": operator}
			runRow(t, r.spec)
		})
	}
}

// noLeak fails when a canary is in the returned record or in any file
// under the run's data directory, in clear, URL-escaped or JSON-escaped.
func noLeak(t *testing.T, b *testBundle, rec *domain.RunRecord, canaries ...string) {
	t.Helper()
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"the returned record": raw}
	err = filepath.WalkDir(b.opts.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("expected record.json and events.jsonl, found %d files", len(files)-1)
	}
	for _, c := range canaries {
		esc, _ := json.Marshal(c)
		forms := slices.Compact(slices.Sorted(slices.Values([]string{
			c, url.QueryEscape(c), strings.Trim(string(esc), `"`), strings.ReplaceAll(c, "!", `\u0021`)})))
		for name, data := range files {
			for _, form := range forms {
				if strings.Contains(string(data), form) {
					t.Errorf("canary %q (as %q) is in %s", c, form, name)
				}
			}
		}
	}
}

// TestEngineRegressions holds cases that once failed: recovery during a
// wait_for step and at the final checkpoint, a crash while waiting, and a
// secret the app echoes back (refused as an output, never returned).
func TestEngineRegressions(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name string
		why  string
		spec
	}{
		{"surface crash while the engine waits fails promptly", "a surface that crashes while the engine waits " +
			"for a screen (replay settle → runtime.Dispatcher.WaitChange) ends the run FAILED with INTERNAL instead of " +
			"SURFACE_CRASHED: Dispatcher.WaitChange returns the surface's error as is (Observe wraps its errors with " +
			"domain.Wrap(surface.FailureCode(err), ...)), and settle hands it to errEnd, where domain.ErrorCode maps " +
			"any error without a *domain.Error to INTERNAL.", spec{
			cap: "lookup.yaml",
			app: lookup(lookupConf{searchLabel: "Find"}), inputs: member("12345"),
			prepare: func(t *testing.T, b *testBundle) {
				b.opts.StepWait = 20 * time.Second
				b.opts.Surface = &afterDispatch{Surface: b.sim, n: 2, hook: func() { time.AfterFunc(50*time.Millisecond, b.sim.Crash) }}
			},
			// A run that missed the crash would wait out its 20 s step
			// wait; 10 s tells the two apart on a loaded CI machine.
			check: func(t *testing.T, _ *testBundle, rec *domain.RunRecord) {
				if rec.DurationMS > 10000 {
					t.Errorf("the run took %d ms to notice the crash", rec.DurationMS)
				}
			},
			want: want{status: domain.StatusFailed, code: domain.CodeSurfaceCrashed, dispatches: 2},
		}},
		{"a secret the app echoes back stays out of the returned record", "when the app shows a typed " +
			"secret back and a capability extracts it (here into a plain string output), the returned *RunRecord " +
			"carries the secret (and the sensitive operator input) in clear in Outputs (and would in Message, e.g. when a transform refuses the text). " +
			"record.json is clean (the dispatcher registered the literal with the redactor), but Run returns the " +
			"unredacted record and cua replay prints it (--json and the summary) without redaction; invariant 6 " +
			"says every sink is redacted. Run could pass outputs and messages through the redactor before it " +
			"returns, or refuse an extracted value that contains a registered secret.", spec{
			cap: "signon.yaml",
			edits: []string{
				"risk: safe\nsteps:", "outputs:\n  - name: banner\n    type: string\n    source: {step: read_banner}\nrisk: safe\nsteps:",
				"      node_exists: {role: heading, name: Welcome}\n",
				"      node_exists: {role: heading, name: Welcome}\n  - id: read_banner\n    action: extract\n" +
					"    target: {role: cell, anchor: {relation: row_of, text: Signed in}}\n    into: banner\n",
			},
			app:    func() *sim.Flow { return signonApp("op-canary-7731", "Canary-5f2c-Pw!x", true) },
			inputs: map[string]string{"operator": "op-canary-7731"},
			prepare: func(t *testing.T, b *testBundle) {
				b.opts.Secrets = secrets{"corebank_password": "Canary-5f2c-Pw!x"}
			},
			check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
				noLeak(t, b, rec, "Canary-5f2c-Pw!x", "op-canary-7731")
			},
			want: want{status: domain.StatusFailed, code: domain.CodeOutputInvalid, dispatches: 4},
		}},
		{"recovery during a wait_for step", "a recovery rule that matches while a wait_for step waits " +
			"(act → settle returns vRecovery) ends the run FAILED with an empty failure code: act's ActWaitFor case " +
			"returns v.end() for every verdict but vExpected/vOutcome, and v.end() of a vRecovery verdict has no code. " +
			"The declared remedy should run (reload) and the run re-anchor, as in the pre-act and postcondition paths.", spec{
			cap: "waiter.yaml",
			app: func() *sim.Flow {
				f := waiterApp(true)
				// After the reload the job is ready.
				f.OnLoad("job", sim.Nth(2, sim.Goto("ready")))
				return f
			},
			prepare: func(t *testing.T, b *testBundle) {
				// Fail the job page once the engine is waiting for "Job ready".
				b.opts.Surface = &afterDispatch{Surface: b.sim, n: 2, hook: func() {
					time.AfterFunc(100*time.Millisecond, func() {
						_ = b.flow.Push(sim.Fault(502))
						b.sim.Changed()
					})
				}}
			},
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: 4},
		}},
		{"recovery when the capability checkpoint is judged", "when the screen matches a recovery rule " +
			"while the final capability checkpoint is judged (steps() → settle(checkpoint) returns vRecovery), the run " +
			"ends FAILED with an empty failure code: the default branch calls v.end(), which has no code for a vRecovery " +
			"verdict (only UNEXPECTED_STATE is mapped to CHECKPOINT_FAILED). The declared remedy should run, or at the " +
			"least the run should fail with a code.", spec{
			cap:  "waiter.yaml",
			app:  func() *sim.Flow { return waiterApp(false, sim.Goto("closed"), sim.Nth(1, sim.Fault(502))) },
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: 4},
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			runRow(t, r.spec)
		})
	}
}

// TestWaiter is the baseline of TestEngineBugs' capability: without faults
// it succeeds.
func TestWaiter(t *testing.T) {
	t.Parallel()
	runRow(t, spec{cap: "waiter.yaml", app: func() *sim.Flow { return waiterApp(false) },
		want: want{status: domain.StatusSuccess, dispatches: 3, steps: []string{"start", "wait_ready", "close"}}})
}

// refusedUpFront: a run whose irreversible step can never be authorized is
// refused before its first dispatch, and says why.
func refusedUpFront(t *testing.T, b *testBundle, rec *domain.RunRecord) {
	t.Helper()
	if !strings.Contains(rec.Message, "can never be authorized in this run") {
		t.Errorf("message %q does not say the irreversible step can never be authorized", rec.Message)
	}
	nothingReachedTheApp(t, b, rec)
	wantEffect(t, rec, "submit", domain.EffectNotSent)
}

// wantEffect checks one step's effect in the record's summary.
func wantEffect(t *testing.T, rec *domain.RunRecord, step string, want domain.Effect) {
	t.Helper()
	if rec.Effects == nil {
		t.Fatalf("record has no effects summary, want %s for %s", want, step)
	}
	for _, se := range rec.Effects.Steps {
		if se.Step == step {
			if se.Effect != want {
				t.Errorf("effect of %s = %s, want %s", step, se.Effect, want)
			}
			return
		}
	}
	t.Errorf("effects %+v do not list step %s", rec.Effects.Steps, step)
}
