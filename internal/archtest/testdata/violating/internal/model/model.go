// Package model is the model port.
package model

import "example.com/violating/internal/domain"

// Model proposes an action.
type Model interface{ Next(domain.Run) string }
