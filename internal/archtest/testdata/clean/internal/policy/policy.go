// Package policy makes authorized actions.
package policy

import "example.com/clean/internal/domain"

// AuthorizedAction is the token only policy makes.
type AuthorizedAction struct{ run domain.Run }

// Authorize authorizes.
func Authorize(r domain.Run) AuthorizedAction { return AuthorizedAction{run: r} }
