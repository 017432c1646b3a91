// Package run is a command.
package run

import (
	"context"

	"example.com/clean/internal/launch"
	"example.com/clean/internal/mockapp"
	"example.com/clean/internal/model/cassette"
	"example.com/clean/internal/replay"
	"example.com/clean/internal/store/sqlite"
)

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string) int {
	_, _, _ = mockapp.Handler, cassette.Cassette{}, sqlite.DB{}
	_ = ctx
	_ = args
	if err := replay.Run(launch.Sim(), cassetteRun()); err != nil {
		return 1
	}
	return 0
}
