package domain_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// TestEvidenceFor: a run keeps the higher of the capability's level and
// its own; none only for a read-only capability that does not seal full
// (an approval covers the sealed level), refused naming
// --evidence-level for one with an elevated step, a gate or an effect
// contract (a loop's inner step included).
func TestEvidenceFor(t *testing.T) {
	t.Parallel()
	ro := &domain.Capability{ID: "a.read", Version: "1.0.0", Steps: []domain.Step{{ID: "s", Action: domain.ActExtract}}}
	full := &domain.Capability{ID: "a.full", Version: "1.0.0", Evidence: domain.EvidenceFull, Steps: ro.Steps}
	gated := &domain.Capability{ID: "a.gate", Version: "1.0.0", Steps: []domain.Step{{ID: "s", Gate: true}}}
	loop := &domain.Capability{ID: "a.loop", Version: "1.0.0", Steps: []domain.Step{{ID: "l",
		ForEach: &domain.ForEach{Input: "rows", As: "row", Steps: []domain.Step{{ID: "x", Risk: domain.RiskElevated}}}}}}
	effect := &domain.Capability{ID: "a.eff", Version: "1.0.0", Steps: []domain.Step{{ID: "s", Effects: []domain.EffectContract{{}}}}}
	tests := []struct {
		c        *domain.Capability
		override domain.EvidenceLevel
		want     domain.EvidenceLevel
		err      string
	}{
		{ro, "", domain.EvidenceDecisive, ""},
		{ro, domain.EvidenceFull, domain.EvidenceFull, ""},
		{ro, domain.EvidenceNone, domain.EvidenceNone, ""},
		{full, domain.EvidenceDecisive, domain.EvidenceFull, ""},
		{full, domain.EvidenceNone, "", "--evidence-level none: a.full@1.0.0 seals evidence: full"},
		{gated, domain.EvidenceNone, "", "--evidence-level none: a.gate@1.0.0 is not read-only"},
		{loop, domain.EvidenceNone, "", "--evidence-level none: a.loop@1.0.0 is not read-only"},
		{effect, domain.EvidenceNone, "", "not read-only"},
		{gated, domain.EvidenceFull, domain.EvidenceFull, ""},
		{ro, "most", "", `--evidence-level "most"`},
	}
	for _, tt := range tests {
		got, err := tt.c.EvidenceFor(tt.override)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s with %q: %q, %v; want %q, %q", tt.c.ID, tt.override, got, err, tt.want, tt.err)
		}
	}
	var l domain.EvidenceLevel
	if err := l.Set("FULL"); err != nil || l != domain.EvidenceFull {
		t.Errorf("Set(FULL) = %q, %v", l, err)
	}
	if err := l.Set("all"); err == nil || l != domain.EvidenceFull {
		t.Errorf("Set(all) = %q, %v; want refused, unchanged", l, err)
	}
}
