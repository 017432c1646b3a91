// Package heal wrongly asks a model which control a renamed label became.
package heal

import "example.com/violating/internal/model"

// Proposer guesses.
type Proposer struct{ M model.Model }
