// Package e2e drives the real binary.
package e2e

import "testing"

func TestBinary(t *testing.T) { t.Parallel() }
