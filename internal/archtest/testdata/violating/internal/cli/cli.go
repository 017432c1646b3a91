// Package cli reads snapshots itself instead of asking the engine.
package cli

import "example.com/violating/internal/perception"

// Use touches perception.
var Use = perception.Client
