// Package runtime is the only caller of Surface.Dispatch.
package runtime

import (
	"example.com/clean/internal/domain"
	"example.com/clean/internal/policy"
	"example.com/clean/internal/surface"
)

// Step dispatches one authorized action.
func Step(s surface.Surface, r domain.Run) error {
	return s.Dispatch(policy.Authorize(r))
}
