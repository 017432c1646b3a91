// Package sim is the in-memory surface.
package sim

import (
	"example.com/clean/internal/policy"
	"example.com/clean/internal/surface"
)

// Sim records actions.
type Sim struct{ N int }

var _ surface.Surface = (*Sim)(nil)

// Dispatch records a.
func (s *Sim) Dispatch(policy.AuthorizedAction) error { s.N++; return nil }
