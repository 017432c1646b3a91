package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// TestRunInChromium runs three stages through real Chromium against the
// in-process app: two behave as declared, one is told to expect what the
// app will not do and must be reported failed.
func TestRunInChromium(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil && os.Getenv("CUA_BROWSER") == "" {
		t.Skip("no Chromium (run make deps)")
	}
	all := Stages()
	wrong := all[0]
	wrong.Name, wrong.WantLedger = "expects a ledger entry", 1
	stages := []Stage{all[0], all[5], wrong}
	var started string
	var seen []string
	dataDir := t.TempDir()
	rep, err := Run(t.Context(), Config{
		Capabilities: examples, DataDir: dataDir, Stages: stages,
		OnStart: func(url string) { started = url },
		OnStage: func(n int, r *Result) { seen = append(seen, r.Name) },
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.HasPrefix(started, "http://127.0.0.1:") || rep.AppURL != started {
		t.Errorf("OnStart got %q, report %q; want the app on 127.0.0.1", started, rep.AppURL)
	}
	if len(rep.Stages) != 3 || len(seen) != 3 || seen[2] != wrong.Name {
		t.Fatalf("stages %d, seen %v; want 3 in order", len(rep.Stages), seen)
	}
	for _, r := range rep.Stages[:2] {
		if !r.Pass || r.Record == nil || r.Detail == "" {
			t.Errorf("stage %q: pass=%v problem=%q detail=%q", r.Name, r.Pass, r.Problem, r.Detail)
		}
	}
	if r := rep.Stages[0]; r.Record.Status != domain.StatusSuccess || r.Record.Outputs["savings_balance"] != "1234.56" {
		t.Errorf("reference lookup = %s %v", r.Record.Status, r.Record.Outputs)
	}
	if r := rep.Stages[1]; r.Record.FailureCode != domain.CodeInputInvalid || r.Record.DispatchCount != 0 {
		t.Errorf("malformed input = %s, %d dispatches", r.Record.FailureCode, r.Record.DispatchCount)
	}
	bad := rep.Stages[2]
	if bad.Pass || bad.Problem != "ledger has 0 entries, want 1" || bad.Detail != bad.Problem {
		t.Errorf("wrong expectation: pass=%v problem=%q detail=%q", bad.Pass, bad.Problem, bad.Detail)
	}
	if rep.Failed != 1 || rep.Passed() {
		t.Errorf("report failed=%d passed=%v, want 1 and false", rep.Failed, rep.Passed())
	}
	runs, _ := filepath.Glob(filepath.Join(dataDir, "runs", "*"))
	if len(runs) != 3 {
		t.Errorf("%d run directories under %s, want 3", len(runs), dataDir)
	}
}
