package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func TestSummary(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	Summary(&b, &domain.RunRecord{Status: domain.StatusFailed, Capability: "x.y@1.0.0", FailureCode: domain.CodeInputInvalid, Message: "bad",
		Outputs: map[string]any{"b": 2, "a": "1"}, StrategyMix: map[domain.Strategy]int{"semantic_exact": 2}, RunID: "r1"})
	want := "FAILED  x.y@1.0.0\n  failure      INPUT_INVALID: bad\n  output       a = 1\n  output       b = 2\n" +
		"  steps        0 (dispatches 0, recoveries 0)\n  rungs        semantic_exact×2\n  drift        0.00 (every target found on its recorded rung)\n  duration     0 ms\n  run          r1\n"
	if b.String() != want {
		t.Errorf("Summary =\n%s\nwant\n%s", b.String(), want)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, wantLine string
		wantValid            bool
		wantPath             string
	}{
		{name: "sealed reference", file: "../../examples/capabilities/memberdesk.savings_balance.yaml", wantValid: true, wantLine: "ok   ../../examples/capabilities/memberdesk.savings_balance.yaml  memberdesk.savings_balance@"},
		{name: "invalid", file: "../capability/testdata/invalid/missing_role.yaml", wantLine: "FAIL ", wantPath: "steps[1].target.role"},
		{name: "missing", file: "nonexistent.yaml", wantLine: "FAIL "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := Check(t.Context(), tt.file)
			if r.Valid != tt.wantValid || !strings.HasPrefix(r.Line(), tt.wantLine) {
				t.Errorf("Check(%s) valid %v, line %q", tt.file, r.Valid, r.Line())
			}
			if tt.wantValid && (!r.Sealed || !strings.HasPrefix(r.ContentHash, "sha256:")) {
				t.Errorf("sealed %v hash %q", r.Sealed, r.ContentHash)
			}
			if tt.wantPath != "" && (len(r.Problems) == 0 || r.Problems[0].Path != tt.wantPath) {
				t.Errorf("problems %+v, want path %s", r.Problems, tt.wantPath)
			}
		})
	}
	if got := Trim("abcdef", 4); got != "abc…" {
		t.Errorf("Trim = %q", got)
	}
}
