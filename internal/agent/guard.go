package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/domain"
)

// Autonomy levels.
const (
	LevelAdvisory     = 0 // propose only, never act
	LevelConfirmEach  = 1 // every action needs an approval
	LevelConfirmRisky = 2 // elevated and irreversible actions need an approval
	LevelAuto         = 3 // irreversible actions need an approval or a grant
)

// Proposal is an action waiting for a decision.
type Proposal struct {
	Step   int         `json:"step"`
	Action string      `json:"action"`
	Role   string      `json:"role,omitempty"`
	Name   string      `json:"name,omitempty"`
	Text   string      `json:"text,omitempty"`
	Risk   domain.Risk `json:"risk"`
}

func (p Proposal) String() string {
	s := fmt.Sprintf("%s %s %q", p.Action, p.Role, p.Name)
	if p.Text != "" {
		s += fmt.Sprintf(" with %q", p.Text)
	}
	return s + " (" + string(p.Risk) + ")"
}

// Approver decides on proposals (a person at a prompt, an approval queue).
type Approver interface {
	Approve(ctx context.Context, p Proposal) (bool, error)
}

// Grant is bounded authority delegated in advance: it allows Uses
// irreversible actions on controls whose name contains Match
// (case-insensitive). Each use decrements it.
type Grant struct {
	Match string `json:"match"`
	Uses  int    `json:"uses"`
}

// guard applies the autonomy level to one action.
type guard struct {
	mu        sync.Mutex
	level     int
	sovereign bool
	grants    []Grant
	approver  Approver
}

var errNeedsApproval = errors.New("the action needs an approval")

// check returns whether the action may go (and whether it counts as
// confirmed for the policy chokepoint), or errNeedsApproval.
func (g *guard) check(ctx context.Context, p Proposal) (confirmed bool, err error) {
	need := false
	switch {
	case g.level <= LevelConfirmEach:
		need = true
	case g.level == LevelConfirmRisky:
		need = p.Risk != domain.RiskSafe
	default:
		need = p.Risk == domain.RiskIrreversible
	}
	if !need {
		return false, nil
	}
	if p.Risk == domain.RiskIrreversible {
		if g.sovereign {
			return true, nil
		}
		if g.useGrant(p.Name) {
			return true, nil
		}
	}
	if g.approver == nil {
		return false, errNeedsApproval
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
		return false, fmt.Errorf("approval: %w", ctx.Err())
	}
	ok, err := a.ok, a.err
	if err != nil {
		return false, fmt.Errorf("approval: %w", err)
	}
	if !ok {
		return false, errNeedsApproval
	}
	return true, nil
}

func (g *guard) useGrant(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.grants {
		gr := &g.grants[i]
		if gr.Uses > 0 && gr.Match != "" && strings.Contains(strings.ToLower(name), strings.ToLower(gr.Match)) {
			gr.Uses--
			return true
		}
	}
	return false
}
