package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrHealState: a heal proposal is not in the state a transition starts
// from (another process moved it first).
var ErrHealState = errors.New("heal proposal changed state")

// HealProposal is one stored heal proposal (internal/heal owns its
// meaning): its id, the capability it heals, its state and the proposal
// itself as JSON. The store keeps the columns it filters on and never reads
// Doc.
type HealProposal struct {
	ID           string
	CapabilityID string
	State        string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Doc          json.RawMessage
}

// HealTransition is one step of a proposal's history: from one state to
// another, by whom and why (Doc is internal/heal's JSON). Seq orders the
// history of one database.
type HealTransition struct {
	Seq        int64
	ProposalID string
	At         time.Time
	Doc        json.RawMessage
}

// HealActive is the version of a capability id that unattended runs of
// "ID@active" take, as internal/heal's JSON (version, content hash, the
// proposal that made it active, the previous active version).
type HealActive struct {
	CapabilityID string
	UpdatedAt    time.Time
	Doc          json.RawMessage
}

// HealStore keeps heal proposals, their transitions and the active version
// of each healed capability id. Both adapters implement it beside [Store];
// a caller holding a Store asserts it. Every write is one transaction.
type HealStore interface {
	// AddHealProposal stores a new proposal and its first transition;
	// [ErrExists] when the id is taken, [ErrInvalid] when a field is missing.
	AddHealProposal(ctx context.Context, p HealProposal, t HealTransition) error
	// UpdateHealProposal replaces the proposal p.ID, which must be in state
	// from ([ErrHealState] naming the state it is in otherwise, [ErrNotFound]
	// when absent), appends t and, when active is not nil, sets that
	// capability's active version — all in one transaction.
	UpdateHealProposal(ctx context.Context, p HealProposal, from string, t HealTransition, active *HealActive) error
	// GetHealProposal returns the proposal id or [ErrNotFound].
	GetHealProposal(ctx context.Context, id string) (HealProposal, error)
	// ListHealProposals returns the proposals of capabilityID (all when
	// empty), oldest first.
	ListHealProposals(ctx context.Context, capabilityID string) ([]HealProposal, error)
	// ListHealTransitions returns the history of proposal id, oldest first.
	ListHealTransitions(ctx context.Context, proposalID string) ([]HealTransition, error)
	// GetHealActive returns the active version of capabilityID or
	// [ErrNotFound] when none was ever set.
	GetHealActive(ctx context.Context, capabilityID string) (HealActive, error)
}

// Validate reports a missing field of a proposal as [ErrInvalid].
func (p HealProposal) Validate() error {
	field := ""
	switch {
	case p.ID == "":
		field = "id"
	case p.CapabilityID == "":
		field = "capability_id"
	case p.State == "":
		field = "state"
	case len(p.Doc) == 0:
		field = "doc"
	default:
		return nil
	}
	return fmt.Errorf("heal proposal %q: %s is empty: %w", p.ID, field, ErrInvalid)
}
