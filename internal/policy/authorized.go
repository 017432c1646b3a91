package policy

import (
	"errors"
	"fmt"
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
	ceiling domain.Risk // the highest risk a control the action reaches may carry
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

// Admits judges what the action really reaches, as the surface finds it at
// the moment it acts: the control under the click point and its actionable
// ancestors, an actionable descendant under the point, the control a label
// forwards its click to, the focused control a key goes to, and the button
// Enter in a form submits with. Each is classified by the rules Authorize
// uses (Classify: the role and the name lexicon). It returns nil when every
// one is within what the action was authorized for, and otherwise a
// *DeniedError (POLICY_DENIED, rule "reached_risk", unwrapping to a
// *domain.Error) naming the first control above it by role and name; the
// surface then sends nothing.
//
// What the authorization covers is its profile's: under AUTOMATION the risk
// the step declared (or the one policy computed, if higher, which Authorize
// only lets through when declared); under HUMAN and DISCOVERY, also any
// higher tier that would have needed no consent, grant or approval. An
// invalid action admits nothing.
func (a AuthorizedAction) Admits(reached []domain.Node) error {
	if !a.valid {
		return deny("reached_risk", domain.CodePolicyDenied, "the action was not authorized by policy")
	}
	click := domain.Action{Type: domain.ActClick}
	for i := range reached {
		n := &reached[i]
		r := Classify(click, n)
		if r.Rank() <= a.ceiling.Rank() {
			continue
		}
		verb, on := "the "+string(a.action.Type), "the page"
		if a.action.Type == domain.ActPressKey || (a.action.Type == domain.ActRawInput && a.action.Key != "") {
			verb, on = "the key "+a.action.Key, "the focused element"
		}
		if a.node != nil {
			on = describe(a.node)
		}
		step := ""
		if a.action.StepID != "" {
			step = "step " + quote(a.action.StepID) + ": "
		}
		return deny("reached_risk", domain.CodePolicyDenied,
			"%s%s on %s (authorized as %s) reaches %s, which is %s; nothing was pressed",
			step, verb, on, orSafe(a.risk), describe(n), r)
	}
	return nil
}

// describe names a control by its role and name: button "Transfer now".
func describe(n *domain.Node) string {
	role := n.Role
	if role == "" {
		role = "node"
	}
	name := n.Name
	if r := []rune(name); len(r) > 80 {
		name = string(r[:80]) + "…"
	}
	return role + " " + quote(name)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

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
