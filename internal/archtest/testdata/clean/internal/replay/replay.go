// Package replay replays without a model.
package replay

import (
	"example.com/clean/internal/domain"
	"example.com/clean/internal/runtime"
	"example.com/clean/internal/surface"
)

// Run replays one step through the runtime.
func Run(s surface.Surface, r domain.Run) error { return runtime.Step(s, r) }
