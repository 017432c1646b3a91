package pipeline_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
)

// evalGate lets every run through; eval says whether it is an eval replay.
type evalGate struct{ eval bool }

func (evalGate) Begin(context.Context, string, *capability.Loaded, map[string]any, string) (*domain.RunRecord, string, error) {
	return nil, "", nil
}
func (evalGate) End(context.Context, *domain.RunRecord) error { return nil }
func (evalGate) Unstarted(context.Context, *capability.Loaded, *domain.RunRecord, string) error {
	return nil
}
func (g evalGate) Eval() bool { return g.eval }

// TestEvalReplayOfIrreversibleStepsWarns: cua replay --eval of the
// transfer logs, before its surface opens, that the eval sends submit and
// confirm to the base URL for real and to use staging; a run that is not
// an eval, or an eval of the lookup, says nothing of it.
func TestEvalReplayOfIrreversibleStepsWarns(t *testing.T) {
	t.Parallel()
	const dir = "../../examples/capabilities/"
	transfer, err := capability.Load(dir + "memberdesk.transfer_funds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lookup, err := capability.Load(dir + "memberdesk.savings_balance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[*capability.Loaded]map[string]string{
		transfer: {"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"},
		lookup:   {"member_id": "12345"},
	}
	for _, tt := range []struct {
		name string
		l    *capability.Loaded
		eval bool
		want bool
	}{{"eval of the transfer", transfer, true, true}, {"transfer, no eval", transfer, false, false}, {"eval of the lookup", lookup, true, false}} {
		var logs bytes.Buffer
		var warnedFirst, opened bool
		open := func(context.Context) (surface.Surface, error) {
			warnedFirst, opened = strings.Contains(logs.String(), "irreversible"), true
			return nil, context.Canceled
		}
		// The stub surface never opens: the run ends there, its error aside.
		_, _ = pipeline.Replay(t.Context(), pipeline.ReplayParams{LibraryDir: dir, Open: open, Gate: evalGate{eval: tt.eval},
			Run: replay.Options{Capability: tt.l, RunID: "r1", Inputs: inputs[tt.l], BaseURL: "http://127.0.0.1:8811",
				Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
		if !opened {
			t.Fatalf("%s: the run did not reach its surface:\n%s", tt.name, logs.String())
		}
		got := strings.Contains(logs.String(), "run evals against a staging copy")
		if got != tt.want {
			t.Errorf("%s: warned %v, want %v\n%s", tt.name, got, tt.want, logs.String())
		}
		if tt.want && (!warnedFirst || !strings.Contains(logs.String(), "irreversible steps submit, confirm to http://127.0.0.1:8811")) {
			t.Errorf("%s: the warning does not name the steps and target before the surface opens:\n%s", tt.name, logs.String())
		}
	}
}
