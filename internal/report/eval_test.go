package report

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
)

// TestEvalWarning: the transfer (an irreversible submit) warns naming its
// step, the target and staging; the lookup (read-only) does not warn.
func TestEvalWarning(t *testing.T) {
	t.Parallel()
	transfer, err := capability.Load("../../examples/capabilities/memberdesk.transfer_funds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := EvalWarning(transfer.Capability, "http://127.0.0.1:8811")
	for _, want := range []string{"warning:", transfer.Capability.Ref(), "irreversible steps submit, confirm", "http://127.0.0.1:8811", "staging"} {
		if !strings.Contains(got, want) {
			t.Errorf("EvalWarning = %q, want %q in it", got, want)
		}
	}
	lookup, err := capability.Load("../../examples/capabilities/memberdesk.savings_balance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := EvalWarning(lookup.Capability, "http://127.0.0.1:8811"); got != "" {
		t.Errorf("a read-only capability warns: %q", got)
	}
}
