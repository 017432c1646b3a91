// Package sim is an adapter that wrongly imports a sibling adapter.
package sim

import (
	"example.com/violating/internal/surface"
	"example.com/violating/internal/surface/browser"
)

// Sim delegates to a browser.
type Sim struct{ B browser.Browser }

var _ surface.Surface = Sim{}

// Dispatch delegates: adapters may call Dispatch.
func (s Sim) Dispatch(a string) error { return s.B.Dispatch(a) }
