package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuahq/cua/internal/policy"
)

// Autonomy levels (policy owns them; these keep Config.Autonomy an int).
const (
	LevelAdvisory     = int(policy.LevelAdvisory)     // propose only, never act
	LevelConfirmEach  = int(policy.LevelConfirmEach)  // every action needs an approval
	LevelConfirmRisky = int(policy.LevelConfirmRisky) // elevated and irreversible actions need an approval
	LevelAuto         = int(policy.LevelAuto)         // irreversible actions need an approval or a grant
)

// Proposal is an action waiting for a decision (policy.Proposal).
type Proposal = policy.Proposal

// Grant is bounded authority delegated in advance (policy.Grant): policy
// spends its uses.
type Grant = policy.Grant

// Approver decides on proposals (a person at a prompt, an approval queue).
type Approver interface {
	Approve(ctx context.Context, p Proposal) (bool, error)
}

// guard asks for the consent policy says an action needs. It decides
// nothing itself: policy.Engine.Consult says what is needed, and Authorize
// judges the consent and spends grants.
type guard struct {
	pol      *policy.Engine
	grants   *policy.Grants
	approver Approver
}

var errNeedsApproval = errors.New("the action needs an approval")

// check returns the consent to hand policy (nil when none is needed), or
// errNeedsApproval.
func (g *guard) check(ctx context.Context, p Proposal) (*policy.Consent, error) {
	if g.pol.Consult(p, g.grants) != policy.NeedConsent {
		return nil, nil
	}
	if g.approver == nil {
		return nil, errNeedsApproval
	}
	// An approver that ignores its context must not hold the run past its
	// deadline, the kill file or an interrupt.
	type answer struct {
		ok  bool
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		ok, err := g.approver.Approve(ctx, p)
		ch <- answer{ok, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		return nil, fmt.Errorf("approval: %w", ctx.Err())
	}
	if a.err != nil {
		return nil, fmt.Errorf("approval: %w", a.err)
	}
	if !a.ok {
		return nil, errNeedsApproval
	}
	return &policy.Consent{By: "approver", Proposal: p}, nil
}
