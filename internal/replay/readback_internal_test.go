package replay

import (
	"os"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// historySnap builds a snapshot of a history table: a heading, the table
// (a header row of columnheaders, one row of cells per entry), and a
// second table with other columns.
func historySnap(rows ...[]string) *domain.UiSnapshot {
	s := &domain.UiSnapshot{}
	add := func(parent int, role, name string) int {
		i := len(s.Nodes)
		s.Nodes = append(s.Nodes, domain.Node{Index: i, Role: role, Name: name, Parent: parent})
		if parent >= 0 {
			s.Nodes[parent].Children = append(s.Nodes[parent].Children, i)
		}
		return i
	}
	root := add(-1, "RootWebArea", "")
	add(root, "heading", "Transfer History")
	tbl := add(root, "table", "Transfer history")
	head := add(add(tbl, "rowgroup", ""), "row", "")
	for _, h := range []string{"Date", "From", "To", "Amount", "Reference number"} {
		add(head, "columnheader", h)
	}
	body := add(tbl, "rowgroup", "")
	for _, cells := range rows {
		row := add(body, "row", "")
		for _, c := range cells {
			cell := add(row, "cell", "")
			add(cell, "StaticText", "  "+c+" ") // the cell's text is its child's
		}
	}
	other := add(root, "table", "Balances")
	oh := add(other, "row", "")
	add(oh, "columnheader", "Account")
	add(add(other, "row", ""), "cell", "Savings")
	return s
}

// TestFindTableAndCount: the table whose headers include every match key is
// read (not the other one), cells are trimmed and keyed by header, the
// header row is no entry; an amount compares as money ("$25.75" matches
// the input "25.75"), text exactly.
func TestFindTableAndCount(t *testing.T) {
	t.Parallel()
	snap := historySnap(
		[]string{"12/01/2026", "Savings", "Checking", "$25.75", "TRF-0001"},
		[]string{"12/01/2026", "Savings", "Checking", "$25.00", "TRF-0002"},
		[]string{"12/01/2026", "Checking", "Savings", "$250.00", "TRF-0003"},
		[]string{"12/01/2026", "Savings", "Checking", "$1,025.75", "TRF-0004"},
	)
	tbl, err := findTable(snap, []string{"From", "To", "Amount"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.rows) != 4 || tbl.rows[0]["Reference number"] != "TRF-0001" || tbl.rows[3]["Amount"] != "$1,025.75" {
		t.Fatalf("rows = %v", tbl.rows)
	}
	want := map[string]matchValue{"From": {text: "Savings"}, "To": {text: "Checking"}, "Amount": {text: "25.75", money: true}}
	if got := tbl.count(want); got != (rowCounts{matching: 1, others: 3}) {
		t.Errorf("count = %+v, want 1 matching, 3 others", got)
	}
	want["Reference number"] = matchValue{text: "TRF-0002"}
	want["Amount"] = matchValue{text: "25", money: true}
	if got := tbl.count(want); got != (rowCounts{matching: 1, others: 3}) {
		t.Errorf("count by reference and a whole amount = %+v, want 1 matching", got)
	}
	if cellEquals("$25.00", matchValue{text: "25.00"}) {
		t.Error("a text column compared as money")
	}
	if _, err := findTable(snap, []string{"From", "Memo"}); err == nil || !strings.Contains(err.Error(), "no table on its screen has the columns From, Memo") {
		t.Errorf("missing column: %v", err)
	}
	empty := &domain.UiSnapshot{Nodes: []domain.Node{{Role: "RootWebArea"}, {Index: 1, Role: "status", Name: "No transfers on file"}}}
	if tbl, err := findTable(empty, []string{"From"}); err != nil || len(tbl.rows) != 0 {
		t.Errorf("a screen without a table = %v, %v; want no rows", tbl, err)
	}
}

// TestVerdictOf: the change between the reads against count and others,
// for each write fault's ledger and the control.
func TestVerdictOf(t *testing.T) {
	t.Parallel()
	zero := 0
	rw := &domain.RecordWritten{Count: 1, Others: &zero}
	before := rowCounts{matching: 1, others: 2}
	tests := []struct {
		name  string
		after rowCounts
		want  domain.Effect
		lead  string
	}{
		{"control", rowCounts{2, 2}, domain.EffectVerified, ""},
		{"duplicate_submit", rowCounts{3, 2}, domain.EffectRefuted, "2 matching entries appeared, 1 expected"},
		{"partial_save", rowCounts{1, 3}, domain.EffectRefuted, "0 matching entries appeared, 1 expected; 1 other entry appeared, 0 expected"},
		{"lost_write", rowCounts{1, 2}, domain.EffectRefuted, "0 matching entries appeared, 1 expected"},
		{"stale_overwrite", rowCounts{2, 3}, domain.EffectRefuted, "1 matching entry appeared as expected; 1 other entry appeared, 0 expected"},
		{"entry removed", rowCounts{0, 2}, domain.EffectRefuted, "1 matching entry disappeared, 1 expected"},
	}
	for _, tt := range tests {
		got, lead := verdictOf(rw, before, tt.after)
		if got != tt.want || lead != tt.lead {
			t.Errorf("%s: verdictOf = %s %q, want %s %q", tt.name, got, lead, tt.want, tt.lead)
		}
	}
	loose := &domain.RecordWritten{Count: 1}
	if got, _ := verdictOf(loose, before, rowCounts{2, 7}); got != domain.EffectVerified {
		t.Errorf("without others, other rows changed: %s, want verified", got)
	}
	if worse(domain.EffectVerified, domain.EffectRefuted) != domain.EffectRefuted || worse(domain.EffectIndeterminate, domain.EffectVerified) != domain.EffectIndeterminate ||
		worse("", domain.EffectVerified) != domain.EffectVerified {
		t.Error("worse does not order refuted > indeterminate > verified > none")
	}
}

// TestPostReadEnds: how the verdicts end a run, without a browser: no sent
// step leaves the end as it was; the warning no longer claims an
// unconfirmed effect that a read-back verified.
func TestPostReadEnds(t *testing.T) {
	t.Parallel()
	l := &effectLog{}
	l.declare("confirm", domain.RiskIrreversible)
	l.set("confirm", domain.RiskIrreversible, domain.EffectSentUnconfirmed)
	if !strings.HasPrefix(l.warning(), "EFFECT SENT, UNCONFIRMED") {
		t.Fatalf("warning = %q", l.warning())
	}
	l.find("confirm").Verdict = domain.EffectVerified
	if w := l.warning(); w != "" {
		t.Errorf("a verified effect still warned %q", w)
	}
	l.find("confirm").Verdict = domain.EffectIndeterminate
	if w := l.warning(); w == "" {
		t.Error("an indeterminate effect lost its warning")
	}
	r := &run{eff: &effectLog{}}
	r.eff.declare("confirm", domain.RiskIrreversible)
	e := failEnd(domain.CodeGateReached, "gated")
	reads := []contractRead{{sc: domain.StepContract{Step: "confirm", Contract: &domain.EffectContract{RecordWritten: &domain.RecordWritten{Via: "x@1.0.0", Count: 1}}}}}
	if got := r.postRead(t.Context(), reads, e); got != e {
		t.Errorf("nothing sent: postRead = %+v, want the end unchanged", got)
	}
}

// TestPreflightRefusesWritingReadBack: a contract whose read-back can
// change the application (here the sign-on, which types) is refused
// before the browser starts, naming the field and why.
func TestPreflightRefusesWritingReadBack(t *testing.T) {
	t.Parallel()
	lib, err := LoadDir("../../examples/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	signOn, err := lib.Lookup("corebank.auth.sign_on@1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	history, err := lib.Lookup("memberdesk.transfer_history@1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	transfer, err := lib.Lookup("memberdesk.transfer_funds@1.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := Preflight(transfer, lib); err != nil {
		t.Fatalf("the reference transfer: %v", err)
	}
	raw, err := os.ReadFile(transfer.File)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "via: memberdesk.transfer_history@1.0.0", "via: corebank.auth.sign_on@1.0.0", 1)
	text = strings.Replace(text, history.Hash, signOn.Hash, 1)
	text = text[:strings.LastIndex(text, "content_hash: sha256:")]
	draft, err := capability.Parse("transfer.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	err = Preflight(draft, lib)
	if err == nil || domain.ErrorCode(err) != domain.CodeCapabilityInvalid ||
		!strings.Contains(err.Error(), "steps[7].effects[0].record_written.via: the read-back corebank.auth.sign_on@1.0.0 is not read-only: step enter_operator types") {
		t.Fatalf("Preflight = %v, want the writing read-back refused", err)
	}
}
