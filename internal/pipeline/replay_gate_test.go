package pipeline_test

import (
	"context"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
)

// refusingGate refuses every run the way a catalog refuses an unattended
// run no approval covers.
type refusingGate struct{ ended, unstarted int }

func (g *refusingGate) Begin(context.Context, string, *capability.Loaded, map[string]any, string) (*domain.RunRecord, string, error) {
	return nil, "", domain.Errorf(domain.CodeApprovalRequired, "no approval covers this run")
}

func (g *refusingGate) End(context.Context, *domain.RunRecord) error { g.ended++; return nil }

func (g *refusingGate) Unstarted(context.Context, *capability.Loaded, *domain.RunRecord, string) error {
	g.unstarted++
	return nil
}

// priorGate returns an earlier run's record, as an idempotent repeat does.
type priorGate struct{ prior *domain.RunRecord }

func (g priorGate) Begin(context.Context, string, *capability.Loaded, map[string]any, string) (*domain.RunRecord, string, error) {
	return g.prior, "", nil
}

func (priorGate) End(context.Context, *domain.RunRecord) error { return nil }

func (priorGate) Unstarted(context.Context, *capability.Loaded, *domain.RunRecord, string) error {
	return nil
}

func TestReplayGateRefusesBeforeTheSurfaceOpens(t *testing.T) {
	t.Parallel()
	l, err := capability.Load("../../examples/capabilities/memberdesk.savings_balance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	open := func(context.Context) (surface.Surface, error) { opened++; return nil, context.Canceled }
	prior := &domain.RunRecord{RunID: "first", Status: domain.StatusSuccess}
	tests := []struct {
		name     string
		gate     pipeline.Gate
		wantRun  string
		wantCode domain.FailureCode
	}{
		{"refused", &refusingGate{}, "r1", domain.CodeApprovalRequired},
		{"idempotent repeat", priorGate{prior: prior}, "first", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := pipeline.Replay(t.Context(), pipeline.ReplayParams{LibraryDir: "../../examples/capabilities", Open: open, Gate: tt.gate,
				Run: replay.Options{Capability: l, RunID: "r1", Inputs: map[string]string{"member_id": "12345"}}})
			if err != nil {
				t.Fatal(err)
			}
			if rec.RunID != tt.wantRun || rec.FailureCode != tt.wantCode || rec.DispatchCount != 0 {
				t.Fatalf("record = %+v; want run %s, code %q, no dispatch", rec, tt.wantRun, tt.wantCode)
			}
		})
	}
	if opened != 0 {
		t.Fatalf("the surface opened %d times; a gated run must not open one", opened)
	}
}

// TestReplayIndexesRunsThatNeverStart: a run whose inputs do not bind is
// indexed through the gate (Unstarted), never begun, and opens no surface.
func TestReplayIndexesRunsThatNeverStart(t *testing.T) {
	t.Parallel()
	l, err := capability.Load("../../examples/capabilities/memberdesk.savings_balance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := &refusingGate{}
	open := func(context.Context) (surface.Surface, error) {
		t.Error("a surface opened")
		return nil, context.Canceled
	}
	rec, err := pipeline.Replay(t.Context(), pipeline.ReplayParams{LibraryDir: "../../examples/capabilities", Open: open, Gate: g,
		Run: replay.Options{Capability: l, RunID: "r2", Inputs: map[string]string{"member_id": "12 45"}}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.FailureCode != domain.CodeInputInvalid || g.unstarted != 1 || g.ended != 0 {
		t.Fatalf("record %s/%s; unstarted %d, ended %d; want INPUT_INVALID indexed once as unstarted", rec.Status, rec.FailureCode, g.unstarted, g.ended)
	}
}
