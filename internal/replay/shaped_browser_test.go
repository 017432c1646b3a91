package replay_test

import (
	"fmt"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// TestShapedInputOnChromium (issue 24 item 4): an input's transforms
// shape the caller's value before it is bound, so the word typed, the
// value check after typing and the echo the checkpoint reads all see
// "PAYROLL" for "  payroll ". The same capability is generated into a
// Playwright spec by codegen's TestGeneratedSpecsRunGreen.
func TestShapedInputOnChromium(t *testing.T) {
	l, err := capability.Load("../codegen/testdata/shaped.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := newWarmWorld(t)
	rec, err := replay.Run(t.Context(), replay.Options{Capability: l, Inputs: map[string]string{"word": "  payroll "},
		BaseURL: w.app.URL(), Surface: w.sess, Redactor: redact.New(), DataDir: w.dir, RunID: "shaped"})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["echo"]) != "PAYROLL" {
		t.Fatalf("run %s (%s: %s), outputs %v; want SUCCESS echo PAYROLL", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}
	rec, err = replay.Run(t.Context(), replay.Options{Capability: l, Inputs: map[string]string{"word": "pay roll"},
		BaseURL: w.app.URL(), Surface: w.sess, Redactor: redact.New(), DataDir: w.dir, RunID: "shaped-bad"})
	if err == nil && rec.Status == domain.StatusSuccess {
		t.Fatalf("a word the shaped pattern refuses ran: %s", rec.Status)
	}
}
