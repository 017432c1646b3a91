// Package cli is the composition root.
package cli

import (
	"context"

	"example.com/clean/internal/mockapp"
	"example.com/clean/internal/model/cassette"
	"example.com/clean/internal/replay"
	"example.com/clean/internal/store/sqlite"
	"example.com/clean/internal/surface/sim"
)

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string) int {
	_, _, _ = mockapp.Handler, cassette.Cassette{}, sqlite.DB{}
	_ = ctx
	_ = args
	if err := replay.Run(&sim.Sim{}, cassetteRun()); err != nil {
		return 1
	}
	return 0
}
