package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface"
)

const (
	lookup   = "memberdesk.savings_balance"
	transfer = "memberdesk.transfer_funds"
)

// leaseThief hands the session to a human right after the nth dispatch.
type leaseThief struct {
	surface.Surface
	lease *hitl.Lease
	n     int32
	count atomic.Int32
}

func (l *leaseThief) Dispatch(ctx context.Context, a policy.AuthorizedAction) (surface.Result, error) {
	r, err := l.Surface.Dispatch(ctx, a)
	if l.count.Add(1) == l.n {
		l.lease.Transfer("human:operator")
	}
	return r, err
}

type want struct {
	status     domain.RunStatus
	code       domain.FailureCode
	outcome    string
	recoveries int
	dispatches int // -1: not checked
	outputs    map[string]string
	ledger     int
}

func member(id string) map[string]string { return map[string]string{"member_id": id} }

func transferInputs() map[string]string {
	return map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"}
}

// TestResultTable covers every row of DESIGN.md's result table, the
// governance refusals and the fault matrix, over real Chromium and the mock
// app. Each row asserts status, exit code, outcome or failure code, recovery
// attempts and dispatch count.
func TestResultTable(t *testing.T) {
	t.Parallel()
	type row struct {
		name    string
		cap     func(t *testing.T) runSpec
		prepare func(t *testing.T, b *bundle)
		variant string
		want    want
	}
	std := func(id string) func(t *testing.T) runSpec {
		return func(t *testing.T) runSpec { return runSpec{cap: load(t, lookup), inputs: member(id)} }
	}
	arm := func(fault string, count, after int) func(t *testing.T, b *bundle) {
		return func(t *testing.T, b *bundle) {
			b.arm(t, fault, count, after)
		}
	}
	rows := []row{
		{name: "expected: member found", cap: std("12345"),
			want: want{status: domain.StatusSuccess, dispatches: 7, outputs: map[string]string{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"}}},
		{name: "expected: large balance", cap: std("56789"),
			want: want{status: domain.StatusSuccess, dispatches: 7, outputs: map[string]string{"savings_balance": "12345678.90"}}},
		{name: "expected: closed account with zero balance", cap: std("23456"),
			want: want{status: domain.StatusSuccess, dispatches: 7, outputs: map[string]string{"savings_balance": "0.00", "status": "Closed"}}},
		{name: "business outcome: member not found", cap: std("99999"),
			want: want{status: domain.StatusBusinessOutcome, outcome: "member_not_found", dispatches: 7}},
		{name: "business outcome: no savings account", cap: std("34567"),
			want: want{status: domain.StatusBusinessOutcome, outcome: "no_savings_account", dispatches: 7}},
		{name: "business outcome: restricted", cap: std("45678"),
			want: want{status: domain.StatusBusinessOutcome, outcome: "member_restricted", dispatches: 7}},
		{name: "recoverable: 502 once", cap: std("12345"), prepare: arm("transient_load", 1, 0),
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: 8, outputs: map[string]string{"savings_balance": "1234.56"}}},
		{name: "recoverable: 502 mid-run re-anchors", cap: std("12345"), prepare: arm("transient_load", 1, 2),
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: -1, outputs: map[string]string{"savings_balance": "1234.56"}}},
		{name: "recoverable: session expired", cap: std("12345"), prepare: arm("session_timeout", 1, 1),
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: 11, outputs: map[string]string{"savings_balance": "1234.56"}}},
		{name: "recovery exhausted", cap: std("12345"), prepare: arm("transient_load", -1, 0),
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeRecoveryExhausted, recoveries: 1, dispatches: 2}},
		{name: "target not found: renamed label, escalated", cap: func(t *testing.T) runSpec {
			return runSpec{cap: load(t, lookup), inputs: member("12345")}
		}, variant: "c", want: want{status: domain.StatusNeedsHuman, code: domain.CodeTargetNotFound, dispatches: 6}},
		{name: "target not found: not escalated", cap: func(t *testing.T) runSpec {
			return runSpec{cap: derive(t, lookup, "triggers: [RECOVERY_EXHAUSTED, UNEXPECTED_STATE, TARGET_NOT_FOUND, TARGET_AMBIGUOUS]", "triggers: [RECOVERY_EXHAUSTED]"),
				inputs: member("12345")}
		}, variant: "c", want: want{status: domain.StatusFailed, code: domain.CodeTargetNotFound, dispatches: 6}},
		{name: "target ambiguous: a Search button in two frames", cap: func(t *testing.T) runSpec {
			return runSpec{cap: derive(t, lookup, "      name: Search\n      scope: {frame: content}\n", "      name: Search\n"),
				inputs: member("12345")}
		}, want: want{status: domain.StatusNeedsHuman, code: domain.CodeTargetAmbiguous, dispatches: 6}},
		{name: "unexpected state: undeclared dialog is not clicked", cap: std("12345"), prepare: arm("undeclared_dialog", 1, 0),
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 1}},
		{name: "unexpected state: core system rejects the search", cap: std("12345"), prepare: arm("validation_error", 1, 1),
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 7}},
		{name: "churned UI (variant b) replays green", cap: std("12345"), variant: "b",
			want: want{status: domain.StatusSuccess, dispatches: 7, outputs: map[string]string{"savings_balance": "1234.56"}}},
		{name: "lease lost mid-run", cap: func(t *testing.T) runSpec {
			lease := hitl.NewLease("automation:e2e")
			return runSpec{cap: load(t, lookup), inputs: member("12345"), lease: lease, holder: "automation:e2e",
				wrap: func(s surface.Surface) surface.Surface { return &leaseThief{Surface: s, lease: lease, n: 5} }}
		}, want: want{status: domain.StatusFailed, code: domain.CodeLeaseLost, dispatches: 5}},
		{name: "navigation off the allowlist", cap: func(t *testing.T) runSpec {
			return runSpec{cap: derive(t, lookup, `allowed_domains: ["127.0.0.1", "localhost"]`, `allowed_domains: ["bank.example"]`), inputs: member("12345")}
		}, want: want{status: domain.StatusFailed, code: domain.CodeDomainNotAllowed, dispatches: 0}},
		{name: "transfer stops at its gate", cap: func(t *testing.T) runSpec {
			return runSpec{cap: load(t, transfer), inputs: transferInputs()}
		}, want: want{status: domain.StatusNeedsHuman, code: domain.CodeGateReached, dispatches: 12}},
		{name: "transfer without approval is refused before its first dispatch", cap: func(t *testing.T) runSpec {
			return runSpec{cap: load(t, transfer), inputs: transferInputs(), irrev: true, gates: []string{"submit"}}
		}, want: want{status: domain.StatusFailed, code: domain.CodeApprovalRequired, dispatches: 0}},
		{name: "transfer with an approval of other content is refused before its first dispatch", cap: func(t *testing.T) runSpec {
			return runSpec{cap: load(t, transfer), inputs: transferInputs(), irrev: true, gates: []string{"submit"},
				approval: &policy.Approval{Capability: transfer + "@1.3.0", ContentHash: "sha256:" + strings.Repeat("0", 64)}}
		}, want: want{status: domain.StatusFailed, code: domain.CodeApprovalRequired, dispatches: 0}},
		{name: "transfer without --allow-irreversible is refused before its first dispatch", cap: func(t *testing.T) runSpec {
			l := load(t, transfer)
			return runSpec{cap: l, inputs: transferInputs(), gates: []string{"submit"},
				approval: &policy.Approval{Capability: transfer + "@1.3.0", ContentHash: l.Hash}}
		}, want: want{status: domain.StatusFailed, code: domain.CodeApprovalRequired, dispatches: 0}},
		// The transfer's dispatches include its effect contract's read-back:
		// the pre-read (history, then back to the entrypoint) and, once the
		// submit was sent, the post-read.
		{name: "approved transfer posts exactly once", cap: func(t *testing.T) runSpec {
			l := load(t, transfer)
			return runSpec{cap: l, inputs: transferInputs(), irrev: true, gates: []string{"submit"},
				approval: &policy.Approval{Capability: transfer + "@1.3.0", ContentHash: l.Hash, Approver: "reviewer"}}
		}, want: want{status: domain.StatusSuccess, dispatches: 15, ledger: 1, outputs: map[string]string{"confirmation": "TRF-0001"}}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, mockapp.Options{Variant: r.variant})
			if r.prepare != nil {
				r.prepare(t, b)
			}
			spec := r.cap(t)
			rec := b.run(t, spec)
			checkRecord(t, rec, r.want)
			checkRecordSchema(t, rec, b.dataDir)
			if got := b.ledgerLen(t); got != r.want.ledger {
				t.Errorf("ledger has %d entries, want %d", got, r.want.ledger)
			}
			if got := b.noticeAcks(t); got != 0 {
				t.Errorf("the notice was acknowledged %d times: a dialog was clicked through", got)
			}
		})
	}
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
	if w.dispatches >= 0 && rec.DispatchCount != w.dispatches {
		t.Errorf("dispatches %d, want %d", rec.DispatchCount, w.dispatches)
	}
	for k, v := range w.outputs {
		if got := fmt.Sprint(rec.Outputs[k]); got != v {
			t.Errorf("output %s = %q, want %q", k, got, v)
		}
	}
	if w.status != domain.StatusSuccess && len(rec.Outputs) > 0 {
		t.Errorf("a %s run returned outputs %v", w.status, rec.Outputs)
	}
}

// TestInputBoundaries: malformed inputs are refused before anything moves.
func TestInputBoundaries(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	valid := []string{"00000", "12345"}
	invalid := []string{"", "1234", "123456", " 12345", "12345 ", "١٢٣٤٥", "１２３４５", "12a45",
		"1' OR '1'='1", "12345; DROP TABLE members", "<script>1</script>", "<b>12345</b>", "12\n345"}
	for _, in := range valid {
		rec := b.run(t, runSpec{cap: load(t, lookup), inputs: member(in)})
		if rec.FailureCode == domain.CodeInputInvalid || rec.DispatchCount == 0 {
			t.Errorf("valid %q refused: %s %s", in, rec.FailureCode, rec.Message)
		}
	}
	for _, in := range invalid {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			t.Parallel()
			rec := b.run(t, runSpec{cap: load(t, lookup), inputs: member(in)})
			checkRecord(t, rec, want{status: domain.StatusFailed, code: domain.CodeInputInvalid, dispatches: 0})
			checkRecordSchema(t, rec, b.dataDir)
		})
	}
	t.Run("missing input", func(t *testing.T) {
		t.Parallel()
		rec := b.run(t, runSpec{cap: load(t, lookup), inputs: map[string]string{}})
		checkRecord(t, rec, want{status: domain.StatusFailed, code: domain.CodeInputInvalid, dispatches: 0})
	})
	t.Run("unknown input", func(t *testing.T) {
		t.Parallel()
		rec := b.run(t, runSpec{cap: load(t, lookup), inputs: map[string]string{"member_id": "12345", "branch": "7"}})
		checkRecord(t, rec, want{status: domain.StatusFailed, code: domain.CodeInputInvalid, dispatches: 0})
	})
}
