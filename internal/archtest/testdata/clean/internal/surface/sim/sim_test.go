package sim_test

import (
	"testing"

	"example.com/clean/internal/surface/sim"
	"example.com/clean/internal/surface/surfacetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	surfacetest.Exercise(t, &sim.Sim{})
}
