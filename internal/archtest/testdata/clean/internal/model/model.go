// Package model is the model port.
package model

import "example.com/clean/internal/domain"

// Model proposes the next action.
type Model interface{ Next(domain.Run) string }
