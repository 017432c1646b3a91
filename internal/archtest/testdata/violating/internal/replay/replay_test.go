package replay

import (
	"testing"

	"example.com/violating/internal/surface/sim"
)

func TestRun(t *testing.T) {
	_ = sim.Sim{}.Dispatch("click")
}
