// Package browser is one surface adapter.
package browser

import "example.com/violating/internal/surface"

// Browser is a surface.
type Browser struct{}

var _ surface.Surface = Browser{}

// Dispatch acts.
func (Browser) Dispatch(string) error { return nil }
