package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
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
		Capabilities: examples, DataDir: dataDir, Stages: stages, SkipApproval: true,
		OnStart: func(url string) { started = url },
		OnStage: func(n int, r *Result) { seen = append(seen, r.Name) },
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.HasPrefix(started, "http://127.0.0.1:") || rep.AppURL != started {
		t.Errorf("OnStart got %q, report %q; want the app on 127.0.0.1", started, rep.AppURL)
	}
	if len(rep.Stages) != 4 || len(seen) != 4 || seen[2] != wrong.Name {
		t.Fatalf("stages %d, seen %v; want 3 and the verification, in order", len(rep.Stages), seen)
	}
	// The last stage verified every run the demo made, and says where the
	// run library opens.
	if v := rep.Stages[3]; !v.Pass || !strings.Contains(v.Detail, "3 of 3 runs share_ready") ||
		!strings.Contains(v.Detail, "cua observe --data-dir "+dataDir+", then http://127.0.0.1:8813/") {
		t.Errorf("verification stage: pass=%v detail=%q", v.Pass, v.Detail)
	}
	if rep.Library != "cua observe --data-dir "+dataDir || rep.LibraryURL != "http://127.0.0.1:8813/" {
		t.Errorf("report library %q %q", rep.Library, rep.LibraryURL)
	}
	checkBundles(t, filepath.Join(dataDir, "runs"))
	for _, r := range rep.Stages[:2] {
		if !r.Pass || r.Record == nil || r.Detail == "" {
			t.Errorf("stage %q: pass=%v problem=%q detail=%q", r.Name, r.Pass, r.Problem, r.Detail)
		}
	}
	if r := rep.Stages[0]; r.Record.Status != domain.StatusSuccess || r.Record.Outputs["savings_balance"] != "1234.56" {
		t.Errorf("reference lookup = %s %v", r.Record.Status, r.Record.Outputs)
	}
	// The lookup says which screens its default evidence kept and why:
	// its three outputs' and its final one.
	if d := rep.Stages[0].Detail; strings.Count(d, ".png (output)") != 3 || !strings.Contains(d, "final.png (final) [evidence decisive]") {
		t.Errorf("reference lookup detail does not say which screens were kept: %q", d)
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

// TestApprovalStagesInChromium runs only the approval stages, twice on one
// data dir (as `cua demo` re-run on the default .cua does): each time the
// evals earn the approval, 250.00 posts once under it and 900.00 is
// refused without a session; the demo's catalog indexes every run with
// the approval that admitted it.
func TestApprovalStagesInChromium(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil && os.Getenv("CUA_BROWSER") == "" {
		t.Skip("no Chromium (run make deps)")
	}
	dataDir := t.TempDir()
	for round := 1; round <= 2; round++ {
		rep, err := Run(t.Context(), Config{Capabilities: examples, DataDir: dataDir, Stages: []Stage{}})
		if err != nil {
			t.Fatalf("round %d: Run: %v", round, err)
		}
		if len(rep.Stages) != 5 || !rep.Passed() {
			for _, r := range rep.Stages {
				t.Logf("%s %s: %s", r.Mark(), r.Name, r.Detail)
			}
			t.Fatalf("round %d: %d stages, %d failed; want 4 and the verification passing", round, len(rep.Stages), rep.Failed)
		}
		// Each round verifies only the bundles it made: 5 evals, the
		// accepted transfer and the refused one (refused before a browser
		// opened, it has a bundle like any run: invariant 18).
		if d := rep.Stages[4].Detail; !strings.Contains(d, "7 of 7 runs share_ready") {
			t.Errorf("round %d: verification %q", round, d)
		}
		ok, no := rep.Stages[2].Record, rep.Stages[3].Record
		if ok.Outputs["confirmation"] != "TRF-0006" || ok.DispatchCount == 0 {
			t.Errorf("round %d: accepted transfer %v, %d dispatches", round, ok.Outputs, ok.DispatchCount)
		}
		if no.FailureCode != domain.CodeApprovalRequired || no.DispatchCount != 0 || !strings.Contains(no.Message, "ceiling 500.00") {
			t.Errorf("round %d: refused transfer %s, %d dispatches: %s", round, no.FailureCode, no.DispatchCount, no.Message)
		}
		if d := rep.Stages[3].Detail; !strings.Contains(d, "browser session opened: no") {
			t.Errorf("round %d: refused detail %q", round, d)
		}
	}
	db, err := sqlite.Open(t.Context(), CatalogPath(dataDir), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.ListRuns(t.Context(), store.RunFilter{CapabilityID: transferCap})
	if err != nil {
		t.Fatal(err)
	}
	var evals, accepted, refused int
	for _, r := range runs {
		switch {
		case r.Eval && r.Status == domain.StatusSuccess:
			evals++
		case r.Status == domain.StatusSuccess && r.ApprovalID != "":
			accepted++
		case r.FailureCode == domain.CodeApprovalRequired && r.ApprovalID == "":
			refused++
		}
	}
	if len(runs) != 14 || evals != 10 || accepted != 2 || refused != 2 {
		t.Errorf("run index: %d runs, %d evals, %d accepted, %d refused; want 14, 10, 2, 2", len(runs), evals, accepted, refused)
	}
	aps, err := db.ListApprovals(t.Context(), store.ApprovalFilter{CapabilityID: transferCap})
	if err != nil {
		t.Fatal(err)
	}
	if len(aps) != 2 || aps[0].Bounds.Max["amount"] != ApprovalMax || aps[0].ExpiresAt.IsZero() {
		t.Errorf("approvals %+v, want two bounded by amount <= %s, each expiring", aps, ApprovalMax)
	}
}
