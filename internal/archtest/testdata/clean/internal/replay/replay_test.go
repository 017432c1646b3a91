package replay

import (
	"testing"

	"example.com/clean/internal/domain"
	"example.com/clean/internal/model/cassette"
	"example.com/clean/internal/policy"
	"example.com/clean/internal/surface/sim"
)

func TestRun(t *testing.T) {
	t.Parallel()
	s := &sim.Sim{}
	_ = s.Dispatch(policy.Authorize(domain.Run{})) // tests may dispatch
	_ = cassette.Cassette{}                        // and import anything
	if err := Run(s, domain.Run{}); err != nil {
		t.Fatal(err)
	}
}
