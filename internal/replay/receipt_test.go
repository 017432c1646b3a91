package replay_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/receipt"
	"github.com/cuahq/cua/internal/surface/sim"
)

// TestRunWritesReceipt: every replay leaves plan.json and receipt.json
// (and gate.json when it stopped at a gate) in its bundle, each valid
// against its published schema and covered by the manifest, and a
// sensitive input's value appears in none of them.
func TestRunWritesReceipt(t *testing.T) {
	t.Parallel()
	const secretAmount = "4321.87"
	sensitive := []string{"type: money\n", "type: money\n    sensitive: true\n"}
	approve := func(t *testing.T, b *testBundle) {
		b.opts.ReleasedGates, b.opts.AllowIrreversible = []string{"submit"}, true
		b.opts.Approval = &policy.Approval{Capability: "test.transfer@1.0.0", ContentHash: b.loaded.Hash, Approver: "reviewer"}
	}
	tests := []struct {
		name    string
		sp      spec
		outcome string
		gate    bool
	}{
		{"stopped at the gate", spec{cap: "transfer.yaml", edits: sensitive, inputs: map[string]string{"amount": secretAmount},
			app: func() *sim.Flow { return transferApp("TRF-0001") }}, receipt.OutcomeStoppedAtGate, true},
		{"approved and completed", spec{cap: "transfer.yaml", edits: sensitive, inputs: map[string]string{"amount": secretAmount},
			app: func() *sim.Flow { return transferApp("TRF-0001") }, prepare: approve}, receipt.OutcomeCompleted, false},
		{"input refused", spec{cap: "transfer.yaml", inputs: map[string]string{"amount": "1,000"},
			app: func() *sim.Flow { return transferApp("TRF-0001") }}, receipt.OutcomeFailed, false},
		{"undeclared dialog", spec{cap: "lookup.yaml", inputs: member("12345"),
			app: lookup(lookupConf{entryDialog: &domain.Dialog{Type: "alert", Message: "Scheduled maintenance"}})},
			receipt.OutcomeUnknownModal, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.sp)
			rec := b.run(t)
			dir := filepath.Join(b.opts.DataDir, "runs", b.opts.RunID)
			docs := map[string]receipt.Kind{evidence.PlanFile: receipt.KindPlan, evidence.ReceiptFile: receipt.KindReceipt}
			if tt.gate {
				docs[evidence.GateFile] = receipt.KindGate
			} else if _, err := os.Stat(filepath.Join(dir, evidence.GateFile)); err == nil {
				t.Errorf("%s written for a run that did not stop at a gate", evidence.GateFile)
			}
			for name, kind := range docs {
				raw, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatalf("%s (run %s %s): %v", name, rec.Status, rec.FailureCode, err)
				}
				if err := receipt.Validate(kind, raw); err != nil {
					t.Errorf("%s: %v\n%s", name, err, raw)
				}
				if strings.Contains(string(raw), secretAmount) {
					t.Errorf("%s holds the sensitive input:\n%s", name, raw)
				}
			}
			var rc receipt.Receipt
			raw, _ := os.ReadFile(filepath.Join(dir, evidence.ReceiptFile))
			if err := json.Unmarshal(raw, &rc); err != nil {
				t.Fatal(err)
			}
			if rc.Outcome != tt.outcome || rc.RunID != rec.RunID || rc.RunStatus != rec.Status {
				t.Errorf("receipt outcome %s run %s %s; want %s for %s %s (%s)", rc.Outcome, rc.RunID, rc.RunStatus, tt.outcome, rec.Status, rec.FailureCode, rec.Message)
			}
			if rep := evidence.Verify(dir, []string{secretAmount}); !rep.ShareReady {
				t.Errorf("bundle not share_ready: %v", rep.Reasons)
			}
			var m evidence.Manifest
			mraw, _ := os.ReadFile(filepath.Join(dir, evidence.ManifestFile))
			if err := json.Unmarshal(mraw, &m); err != nil {
				t.Fatal(err)
			}
			for name := range docs {
				if _, ok := m.Files[name]; !ok {
					t.Errorf("the manifest does not cover %s", name)
				}
			}
		})
	}
}
