package main

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

// TestJudgeFault: each run is judged from the ledger alone, per the
// phase's definitions: a done run is a correct success only with the one
// right entry under the confirmation it returned; a halt is correct on a
// fault that fired and left the ledger wrong, or on timeout_after_write;
// a halt on the control or on a fault that never fired is false.
func TestJudgeFault(t *testing.T) {
	t.Parallel()
	want := ledgerWant{Member: "12345", From: "Savings", To: "Checking", Amount: "25.75", Operator: "OP1001"}
	entry := func(conf, amount, op string) mockapp.LedgerEntry {
		return mockapp.LedgerEntry{Kind: "transfer", Confirmation: conf, Member: "12345", From: "Savings", To: "Checking", Amount: amount, Operator: op}
	}
	right := []mockapp.LedgerEntry{entry("TRF-0001", "25.75", "OP1001")}
	for _, tc := range []struct {
		name  string
		run   faultRun
		want  string
		inWhy string
	}{
		{"control, success", faultRun{Class: controlClass, Status: domain.StatusSuccess, Confirmation: "TRF-0001", New: right}, verdictCorrectSuccess, ""},
		{"control, success naming another confirmation", faultRun{Class: controlClass, Status: domain.StatusSuccess, Confirmation: "TRF-0009", New: right}, verdictSilentWrong, "TRF-0009"},
		{"control, halt", faultRun{Class: controlClass, Status: domain.StatusNeedsHuman, FailureCode: "UNEXPECTED_STATE"}, verdictFalseHalt, "no fault"},
		{"control, halt after the write", faultRun{Class: controlClass, Status: domain.StatusFailed, New: right}, verdictFalseHalt, "1 entry"},
		{"partial save, success", faultRun{Class: mockapp.FaultPartialSave, Fired: true, Status: domain.StatusSuccess, Confirmation: "TRF-0001",
			New: []mockapp.LedgerEntry{entry("TRF-0001", "25.00", "OP1001")}}, verdictSilentWrong, "25.00"},
		{"partial save, halt", faultRun{Class: mockapp.FaultPartialSave, Fired: true, Status: domain.StatusFailed, FailureCode: "EFFECT_REFUTED",
			New: []mockapp.LedgerEntry{entry("TRF-0001", "25.00", "OP1001")}}, verdictCorrectHalt, ""},
		{"duplicate, success", faultRun{Class: mockapp.FaultDuplicateSubmit, Fired: true, Status: domain.StatusSuccess, Confirmation: "TRF-0001",
			New: []mockapp.LedgerEntry{entry("TRF-0001", "25.75", "OP1001"), entry("TRF-0002", "25.75", "OP1001")}}, verdictSilentWrong, "2 entries"},
		{"stale overwrite, halt", faultRun{Class: mockapp.FaultStaleOverwrite, Fired: true, Status: domain.StatusNeedsHuman,
			New: []mockapp.LedgerEntry{entry("TRF-0001", "250.00", "OP2002"), entry("TRF-0002", "25.75", "OP1001")}}, verdictCorrectHalt, ""},
		{"another operator's entry alone", faultRun{Class: controlClass, Status: domain.StatusSuccess, Confirmation: "TRF-0001",
			New: []mockapp.LedgerEntry{entry("TRF-0001", "25.75", "OP2002")}}, verdictSilentWrong, "OP2002"},
		{"lost write, success", faultRun{Class: mockapp.FaultLostWrite, Fired: true, Status: domain.StatusSuccess, Confirmation: "TRF-0001"}, verdictSilentWrong, "no entry"},
		{"lost write, business outcome", faultRun{Class: mockapp.FaultLostWrite, Fired: true, Status: domain.StatusBusinessOutcome}, verdictSilentWrong, "BUSINESS_OUTCOME"},
		{"timeout after write, halt", faultRun{Class: mockapp.FaultTimeoutAfterWrite, Fired: true, Status: domain.StatusNeedsHuman, New: right}, verdictCorrectHalt, ""},
		{"timeout after write, proven", faultRun{Class: mockapp.FaultTimeoutAfterWrite, Fired: true, Status: domain.StatusSuccess, Confirmation: "TRF-0001", New: right}, verdictCorrectSuccess, ""},
		{"fault never fired, halt", faultRun{Class: mockapp.FaultLostWrite, Fired: false, Status: domain.StatusFailed}, verdictFalseHalt, "never fired"},
		{"fault fired, ledger right, halt", faultRun{Class: mockapp.FaultResetAfterWrite, Fired: true, Status: domain.StatusFailed, New: right}, verdictFalseHalt, "ledger is right"},
	} {
		got, why := judgeFault(tc.run, want)
		correct := got == verdictCorrectSuccess || got == verdictCorrectHalt
		if got != tc.want || !strings.Contains(why, tc.inWhy) || correct != (why == "") {
			t.Errorf("%s: %s (%q), want %s with %q", tc.name, got, why, tc.want, tc.inWhy)
		}
	}
}

// TestWilson95 checks the Wilson score interval against published values
// and the edges.
func TestWilson95(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		k, n int
		want interval
	}{
		{0, 10, interval{0, 0.2775}}, {1, 10, interval{0.0179, 0.4042}}, {5, 10, interval{0.2366, 0.7634}},
		{10, 10, interval{0.7225, 1}}, {0, 80, interval{0, 0.0458}}, {3, 80, interval{0.0128, 0.1045}}, {0, 0, interval{0, 1}},
	} {
		if got := wilson95(tc.k, tc.n); got != tc.want {
			t.Errorf("wilson95(%d, %d) = %+v, want %+v", tc.k, tc.n, got, tc.want)
		}
	}
}

// TestTallyRow: a row counts each verdict with its interval, the runs
// whose fault never fired, the endings, and keeps distinct samples.
func TestTallyRow(t *testing.T) {
	t.Parallel()
	runs := []faultRun{
		{Class: mockapp.FaultLostWrite, Fired: true, Status: domain.StatusSuccess},
		{Class: mockapp.FaultLostWrite, Fired: true, Status: domain.StatusFailed, FailureCode: "EFFECT_REFUTED"},
		{Class: mockapp.FaultLostWrite, Fired: false, Status: domain.StatusFailed, FailureCode: "TARGET_NOT_FOUND"},
	}
	row := tallyRow(mockapp.FaultLostWrite, runs, []string{verdictSilentWrong, verdictCorrectHalt, verdictFalseHalt}, []string{"a", "", "b"})
	if row.Runs != 3 || row.SilentWrong.K != 1 || row.CorrectHalt.K != 1 || row.FalseHalt.K != 1 || row.NotFired != 1 ||
		row.SilentWrong.Interval != wilson95(1, 3) || row.Codes["FAILED EFFECT_REFUTED"] != 1 || row.Codes["SUCCESS"] != 1 || len(row.Samples) != 2 {
		t.Fatalf("row = %+v", row)
	}
	total := totalRow([]faultRow{row, row})
	if total.Runs != 6 || total.SilentWrong.K != 2 || total.SilentWrong.Interval != wilson95(2, 6) {
		t.Errorf("total = %+v", total)
	}
}

// TestStripEffects: the screen-only arm is the reference with every
// effects block removed and nothing else.
func TestStripEffects(t *testing.T) {
	t.Parallel()
	in := "steps:\n  - id: confirm\n    action: click\n    effects:\n      - kind: record_written\n        via: x\n      - kind: y\n    postcondition:\n      node_exists: {role: heading}\n  - id: read\n    action: extract\n"
	got, n := stripEffects(in)
	want := "steps:\n  - id: confirm\n    action: click\n    postcondition:\n      node_exists: {role: heading}\n  - id: read\n    action: extract\n"
	if n != 1 || got != want {
		t.Errorf("stripEffects = %d\n%s\nwant 1\n%s", n, got, want)
	}
	last := "steps:\n  - id: confirm\n    effects: [{kind: record_written}]\ncheckpoint: {}\n"
	if got, n := stripEffects(last); n != 1 || got != "steps:\n  - id: confirm\ncheckpoint: {}\n" {
		t.Errorf("stripEffects of an inline block = %d %q", n, got)
	}
}
