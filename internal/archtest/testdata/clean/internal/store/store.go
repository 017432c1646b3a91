// Package store is the persistence port.
package store

import "example.com/clean/internal/domain"

// Store saves runs.
type Store interface{ Save(domain.Run) error }
