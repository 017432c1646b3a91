// Package surfacetest is the surface conformance suite.
package surfacetest

import (
	"testing"

	"example.com/clean/internal/domain"
	"example.com/clean/internal/policy"
	"example.com/clean/internal/surface"
)

// Exercise runs the suite against s.
func Exercise(t *testing.T, s surface.Surface) {
	if err := s.Dispatch(policy.Authorize(domain.Run{})); err != nil {
		t.Fatal(err)
	}
}
