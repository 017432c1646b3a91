package main

import "context"

// allowOrigin is "--allow-origin base" for a cua command that works runs
// (worker, batch): a worker runs a job only against an origin its
// capability declares or the worker allows (invariant 17), and the example
// capabilities name bare hosts. Empty when the binary under test predates
// the flag.
func allowOrigin(ctx context.Context, c *config, sub, base string) []string {
	if !supportsFlag(ctx, c, sub, "allow-origin") {
		return nil
	}
	return []string{"--allow-origin", base}
}
