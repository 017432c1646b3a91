package mockapp

import (
	"strings"
	"testing"
)

func TestJudgeDrift(t *testing.T) {
	t.Parallel()
	right := map[string]string{"savings_balance": "1234.56", "status": "Active", "as_of": "2026-11-30"}
	wrong := map[string]string{"savings_balance": "9876.54", "status": "Closed", "as_of": "2019-01-31"}
	tests := []struct {
		name string
		run  DriftRun
		want string
	}{
		{"benign success", DriftRun{Kind: DriftBenign, Status: "SUCCESS", Outputs: right}, VerdictOK},
		{"benign named change success", DriftRun{Kind: DriftBenign, Change: "usd_in_header", Status: "SUCCESS", Outputs: right}, VerdictOK},
		{"benign wrong outputs", DriftRun{Kind: DriftBenign, Status: "SUCCESS", Outputs: wrong}, VerdictSilentWrong},
		{"benign missing output", DriftRun{Kind: DriftBenign, Status: "SUCCESS", Outputs: map[string]string{"status": "Active"}}, VerdictSilentWrong},
		{"benign business outcome", DriftRun{Kind: DriftBenign, Status: "BUSINESS_OUTCOME"}, VerdictSilentWrong},
		{"benign halt", DriftRun{Kind: DriftBenign, Status: "NEEDS_HUMAN", FailureCode: "TARGET_NOT_FOUND"}, VerdictFalseHalt},
		{"benign decoy hit", DriftRun{Kind: DriftBenign, Status: "SUCCESS", Outputs: right, DecoyHits: 1}, VerdictSilentWrong},
		{"semantic right halt", DriftRun{Kind: DriftSemantic, Change: "currency_near_value", Status: "FAILED", FailureCode: "OUTPUT_INVALID"}, VerdictOK},
		{"semantic other code", DriftRun{Kind: DriftSemantic, Change: "duplicate_search_button", Status: "NEEDS_HUMAN", FailureCode: "TARGET_NOT_FOUND"}, VerdictHaltedOtherCode},
		{"semantic answer", DriftRun{Kind: DriftSemantic, Change: "currency_near_value", Status: "SUCCESS", Outputs: right}, VerdictSilentWrong},
		{"semantic outputs on a halt", DriftRun{Kind: DriftSemantic, Change: "rename_heading", Status: "FAILED", FailureCode: "TARGET_NOT_FOUND", Outputs: right}, VerdictSilentWrong},
		{"semantic decoy hit", DriftRun{Kind: DriftSemantic, Change: "duplicate_search_button", Status: "NEEDS_HUMAN", FailureCode: "TARGET_AMBIGUOUS", DecoyHits: 2}, VerdictSilentWrong},
	}
	for _, tt := range tests {
		if got := JudgeDrift(tt.run); got != tt.want {
			t.Errorf("%s: JudgeDrift = %q, want %q", tt.name, got, tt.want)
		}
	}
	for _, change := range DriftChanges {
		if len(DriftCodesFor(change)) == 0 {
			t.Errorf("semantic change %s has no right codes", change)
		}
	}
}

func TestDriftBenignChanges(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	checks := map[string][]string{
		"label_value_one_node": {`>Savings Balance: $1,234.56</p>`, `>Name: Jane Doe</p>`, `>Status: Active</p>`, `>As of: 11/30/2026</p>`},
		"label_value_split":    {`>Savings Balance:</span> <span`, `>$1,234.56</span></p>`, `>Name:</span> <span`, `>Jane Doe</span></p>`},
		"usd_in_header":        {`<th>Balance (USD)</th>`, `>1,234.56<`, `>Active<`},
	}
	for i, change := range DriftBenignChanges {
		v := b.setDrift(t, `{"kind":"benign","seed":`+string(rune('1'+i))+`,"change":"`+change+`"}`)
		if v.Drift == nil || v.Drift.Kind != DriftBenign || v.Drift.Change != change || v.Drift.Detail == "" {
			t.Fatalf("%s: drift = %+v", change, v.Drift)
		}
		if len(v.Drift.Features) != 2 {
			t.Errorf("%s: features %v, want ids and classes only", change, v.Drift.Features)
		}
		p := b.pages(t)
		for _, want := range checks[change] {
			if !strings.Contains(p["member"], want) {
				t.Errorf("%s: member page lacks %q:\n%s", change, want, p["member"])
			}
		}
		if strings.Contains(p["member"], "$1,234.56") == (change == "usd_in_header") {
			t.Errorf("%s: the $ amount shown = %v", change, change != "usd_in_header")
		}
		if change != "usd_in_header" && strings.Contains(p["member"], "<td") {
			t.Errorf("%s: member page still has table cells", change)
		}
		if !strings.Contains(visibleText(p["member"]), "Member Details") || !strings.Contains(visibleText(p["search"]), "Member Search") {
			t.Errorf("%s: headings changed", change)
		}
	}
}
