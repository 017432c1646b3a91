// Package cli is the composition root.
package cli

import (
	"context"

	"example.com/clean/internal/cmd/run"
)

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string) int { return run.Main(ctx, args) }
