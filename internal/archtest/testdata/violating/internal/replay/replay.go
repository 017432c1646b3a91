// Package replay reaches a model through runtime and perception, and
// dispatches itself.
package replay

import (
	"example.com/violating/internal/perception"
	"example.com/violating/internal/runtime"
	"example.com/violating/internal/surface"
)

// Run replays a step.
func Run(r runtime.Runner, s surface.Surface) error {
	_ = perception.Client
	_ = r
	return s.Dispatch("click")
}
