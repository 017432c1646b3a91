package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// TestDriftSaysWhatItMeans: a desktop run whose two targets were found on
// a weaker rung than recorded says so in words, not a bare 1.00.
func TestDriftSaysWhatItMeans(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	step := domain.StepResult{Strategy: domain.StrategyOrdinalInRegion, Drifted: true}
	Summary(&b, &domain.RunRecord{Status: domain.StatusSuccess, Capability: "mousepad.write_note@1.0.0", DriftScore: 1,
		Steps: []domain.StepResult{step, step}, StrategyMix: map[domain.Strategy]int{domain.StrategyOrdinalInRegion: 2}, RunID: "r1"})
	if want := "  drift        1.00 (2 of 2 targets found on a weaker rung than recorded; see rungs)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("Summary =\n%s\nwant the line\n%s", b.String(), want)
	}
}
