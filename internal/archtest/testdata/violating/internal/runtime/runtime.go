// Package runtime wrongly reaches for a model.
package runtime

import (
	"example.com/violating/internal/model"
	"example.com/violating/internal/surface"
)

// Runner dispatches.
type Runner struct {
	M model.Model
	S surface.Surface
}

// Step may dispatch: runtime is the chokepoint.
func (r Runner) Step() error { return r.S.Dispatch("click") }
