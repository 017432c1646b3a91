package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/receipt"
)

// TestScreenshotsAndReceiptOfARealRun replays the transfer with the real
// binary at --evidence-level full until its gate: the bundle holds a masked screenshot per acting
// step, a schema-valid receipt stopped at the gate and a gate record that
// names the decision with its inputs; verify passes, then fails naming
// the screenshot once one of its bytes changes.
func TestScreenshotsAndReceiptOfARealRun(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	creds := []string{"CUA_SECRET_COREBANK_OPERATOR=" + operator, "CUA_SECRET_COREBANK_PASSWORD=" + password}
	// A deployment key signs the bundle: an unsigned one is not share-ready.
	if k := runBin(t, nil, "keys", "init", "--data-dir", b.dataDir); k.code != 0 {
		t.Fatalf("keys init: exit %d\n%s%s", k.code, k.stdout, k.stderr)
	}
	r := runBin(t, creds, "replay", filepath.Join(examples, "memberdesk.transfer_funds.yaml"), "-i", "member_id=12345",
		"-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=250.00",
		"--base-url", b.app.URL(), "--data-dir", b.dataDir, "--json", "--evidence-level", "full")
	var rec domain.RunRecord
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || rec.FailureCode != domain.CodeGateReached {
		t.Fatalf("replay: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	dir := filepath.Join(b.dataDir, "runs", rec.RunID)
	shots, _ := filepath.Glob(filepath.Join(dir, evidence.ScreenshotDir, "step-*.png"))
	if len(shots) < 5 {
		t.Fatalf("%d screenshots, want one per acting step", len(shots))
	}
	for name, kind := range map[string]receipt.Kind{evidence.PlanFile: receipt.KindPlan, evidence.ReceiptFile: receipt.KindReceipt, evidence.GateFile: receipt.KindGate} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := receipt.Validate(kind, raw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if strings.Contains(string(raw), password) || strings.Contains(string(raw), operator) {
			t.Errorf("%s holds a sign-on secret", name)
		}
	}
	var g receipt.Gate
	raw, _ := os.ReadFile(filepath.Join(dir, evidence.GateFile))
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Submit transfer", "amount=250.00", "from_account=Savings", "to_account=Checking", "member_id=12345"} {
		if !strings.Contains(g.Decision, want) {
			t.Errorf("gate decision %q does not name %q", g.Decision, want)
		}
	}
	if v := runBin(t, creds, "verify", rec.RunID, "--data-dir", b.dataDir); v.code != 0 {
		t.Fatalf("untouched run: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	shot := shots[len(shots)-1]
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(shot, data, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := runBin(t, creds, "verify", rec.RunID, "--data-dir", b.dataDir)
	name := evidence.ScreenshotDir + "/" + filepath.Base(shot)
	if bad.code != 1 || !strings.Contains(bad.stdout, name) || !strings.Contains(bad.stdout, "share_ready: false") {
		t.Fatalf("changed screenshot: exit %d, want 1 naming %s\n%s%s", bad.code, name, bad.stdout, bad.stderr)
	}
}
