package state

import "github.com/cuahq/cua/internal/statewire"

// The automation contract's wire types live in internal/statewire, shared
// with the applications that serve it; these names keep the adapter's API.
const (
	StatePath = statewire.StatePath
	ActPath   = statewire.ActPath
)

type (
	// State is the body of GET {base}/_automation/state.
	State = statewire.State
	// Dialog is an open JavaScript-style dialog.
	Dialog = statewire.Dialog
	// Control is one element of the screen.
	Control = statewire.Control
	// ActRequest is the body of POST {base}/_automation/act.
	ActRequest = statewire.ActRequest
	// ActResponse is the body of an answer to an act request.
	ActResponse = statewire.ActResponse
	// ErrorResponse is the body of a 4xx answer.
	ErrorResponse = statewire.ErrorResponse
)
