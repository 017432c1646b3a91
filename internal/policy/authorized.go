package policy

import (
	"errors"
	"slices"

	"github.com/cuahq/cua/internal/domain"
)

// AuthorizedAction is an action that passed the policy chokepoint. Its fields
// are unexported and only this package constructs a valid one, so a surface
// that receives one knows it was authorized (DESIGN invariant 2). The zero
// value is invalid and every surface refuses it.
type AuthorizedAction struct {
	valid   bool
	action  domain.Action
	node    *domain.Node
	text    string
	secret  string
	bound   bool
	risk    domain.Risk
	profile Profile
	epoch   uint64
	holder  string
}

// Valid reports whether the action was made by this package.
func (a AuthorizedAction) Valid() bool { return a.valid }

// Type returns the action type.
func (a AuthorizedAction) Type() domain.ActionType { return a.action.Type }

// StepID returns the capability step the action belongs to, if any.
func (a AuthorizedAction) StepID() string { return a.action.StepID }

// Actor returns who caused the action.
func (a AuthorizedAction) Actor() domain.Actor { return a.action.Actor }

// Node returns a copy of the resolved node, or nil for actions without a
// target (navigate, reload, press_key on the focused element).
func (a AuthorizedAction) Node() *domain.Node {
	if a.node == nil {
		return nil
	}
	n := *a.node
	n.Children = slices.Clone(n.Children)
	return &n
}

// Key returns the key to press.
func (a AuthorizedAction) Key() string { return a.action.Key }

// URL returns the navigation target.
func (a AuthorizedAction) URL() string { return a.action.URL }

// Point returns the raw_input pointer position.
func (a AuthorizedAction) Point() (float64, float64) { return a.action.X, a.action.Y }

// Text returns the value to type or select. For a secret it is empty until
// the dispatcher binds the resolved value with BindSecret.
func (a AuthorizedAction) Text() string { return a.text }

// SecretRef returns the secret reference the action types, or "".
func (a AuthorizedAction) SecretRef() string { return a.secret }

// NeedsSecret reports whether the action still waits for its secret value.
func (a AuthorizedAction) NeedsSecret() bool { return a.secret != "" && !a.bound }

// Risk returns the risk tier the action was authorized at.
func (a AuthorizedAction) Risk() domain.Risk { return a.risk }

// Profile returns the policy profile that authorized the action.
func (a AuthorizedAction) Profile() Profile { return a.profile }

// Epoch returns the lease epoch the action was authorized under.
func (a AuthorizedAction) Epoch() uint64 { return a.epoch }

// Holder returns the lease holder the action was authorized for.
func (a AuthorizedAction) Holder() string { return a.holder }

// ErrNotSecret is returned by BindSecret for an action that types no secret
// or whose secret is already bound.
var ErrNotSecret = errors.New("action has no unbound secret")

// BindSecret returns a copy of a carrying the resolved secret value. It
// widens nothing: the action was authorized to type exactly this secret
// reference into exactly this node. Only the runtime dispatcher calls it,
// immediately before dispatch.
func (a AuthorizedAction) BindSecret(value string) (AuthorizedAction, error) {
	if !a.valid || !a.NeedsSecret() {
		return AuthorizedAction{}, ErrNotSecret
	}
	a.text = value
	a.bound = true
	return a, nil
}
