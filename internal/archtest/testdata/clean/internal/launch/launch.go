// Package launch opens surfaces for commands.
package launch

import (
	"example.com/clean/internal/surface"
	"example.com/clean/internal/surface/sim"
)

// Sim opens the sim surface.
func Sim() surface.Surface { return &sim.Sim{} }
