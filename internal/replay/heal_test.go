package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/replay"
)

// recordingProposer keeps every halt and drift it is told about.
type recordingProposer struct {
	mu            sync.Mutex
	halts, drifts []replay.Halt
}

func (p *recordingProposer) Halted(_ context.Context, h replay.Halt) any {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.halts = append(p.halts, h)
	return map[string]string{"note": "halt at " + h.Step}
}

func (p *recordingProposer) Drifted(_ context.Context, h replay.Halt) any {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drifts = append(p.drifts, h)
	return map[string]string{"note": "drift at " + h.Step}
}

// TestProposerHearsHaltsAndDrifts: a renamed Search button halts the run
// TARGET_NOT_FOUND, the proposer hears it once with the halted screen, the
// run stays halted and its evidence holds the note; a case change resolved
// on a weaker rung than recorded is heard as a drift, the step going on.
func TestProposerHearsHaltsAndDrifts(t *testing.T) {
	t.Parallel()
	p := &recordingProposer{}
	b := setup(t, spec{cap: "lookup.yaml", app: lookup(lookupConf{searchLabel: "Look up"}), inputs: member("12345")})
	b.opts.Proposer = p
	rec := b.run(t)
	if rec.FailureCode != domain.CodeTargetNotFound || len(p.halts) != 1 || len(p.drifts) != 0 {
		t.Fatalf("%s %s; %d halts, %d drifts", rec.Status, rec.FailureCode, len(p.halts), len(p.drifts))
	}
	h := p.halts[0]
	if h.Step != "search" || h.Code != domain.CodeTargetNotFound || h.Node != -1 || h.Snapshot == nil || h.Capability != b.loaded || h.StepNumber != len(rec.Steps) {
		t.Fatalf("halt %+v", h)
	}
	note, err := os.ReadFile(filepath.Join(b.opts.DataDir, "runs", rec.RunID, "heal.jsonl"))
	if err != nil || !strings.Contains(string(note), "halt at search") {
		t.Fatalf("evidence note: %v %s", err, note)
	}

	p = &recordingProposer{}
	b = setup(t, spec{cap: "lookup.yaml", edits: []string{"target: {role: button, name: Search}",
		"target: {role: button, name: Search, recorded_strategy: semantic_exact}"},
		app: lookup(lookupConf{searchLabel: "SEARCH"}), inputs: member("12345")})
	b.opts.Proposer = p
	rec = b.run(t)
	// The sim app answers only a click on "Search", so the run then stops
	// at the search's postcondition; the drift was heard when it resolved.
	if rec.FailureCode == domain.CodeTargetNotFound || len(p.halts) != 0 || len(p.drifts) != 1 {
		t.Fatalf("%s %s; %d halts, %d drifts", rec.Status, rec.FailureCode, len(p.halts), len(p.drifts))
	}
	d := p.drifts[0]
	if d.Step != "search" || d.Strategy != domain.StrategySemanticNormalized || d.Node < 0 || d.Snapshot.Nodes[d.Node].Name != "SEARCH" {
		t.Fatalf("drift %+v", d)
	}
}
