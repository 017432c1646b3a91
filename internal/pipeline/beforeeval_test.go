package pipeline_test

import (
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/pipeline"
)

// TestBeforeEvalSeesTheSealedCapabilityFirst: BeforeEval (where discover
// warns about irreversible steps) gets the sealed capability once, after
// discovery's session and before the eval's opens; without an eval it is
// not called.
func TestBeforeEvalSeesTheSealedCapabilityFirst(t *testing.T) {
	t.Parallel()
	for _, eval := range []bool{true, false} {
		b := setup(t)
		p := b.params(player(t), eval)
		var calls, sessions int
		var hash string
		p.BeforeEval = func(l *capability.Loaded) { calls, sessions, hash = calls+1, len(b.open.flows), l.Hash }
		res, err := pipeline.Run(b.ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !eval && calls != 0:
			t.Errorf("without an eval BeforeEval ran %d times", calls)
		case eval && (calls != 1 || sessions != 1 || hash != res.ContentHash):
			t.Errorf("BeforeEval ran %d times, after %d sessions, on %s; want once, after discovery's one, on %s", calls, sessions, hash, res.ContentHash)
		}
	}
}
