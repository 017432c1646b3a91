package policy

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/domain"
)

// Level is a discovery run's autonomy level: how much a model may do before
// a person says yes.
type Level int

// Autonomy levels.
const (
	LevelAdvisory     Level = 0 // propose only, never act
	LevelConfirmEach  Level = 1 // every action needs a consent
	LevelConfirmRisky Level = 2 // elevated and irreversible actions need a consent
	LevelAuto         Level = 3 // irreversible actions need a consent or a grant
	LevelSovereign    Level = 4 // LevelAuto with irreversible actions delegated for the run
)

// Valid reports whether l is one of the levels 0-4.
func (l Level) Valid() bool { return l >= LevelAdvisory && l <= LevelSovereign }

// needsConsent reports whether an action of risk needs a person's yes (or,
// for an irreversible one, a grant) at level l.
func (l Level) needsConsent(risk domain.Risk) bool {
	switch {
	case l <= LevelConfirmEach:
		return true
	case l == LevelConfirmRisky:
		return risk != domain.RiskSafe && risk != ""
	case l == LevelAuto:
		return risk == domain.RiskIrreversible
	}
	return false
}

// Proposal is an action waiting for a decision: what a person is asked to
// consent to.
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

// Consent is a person's yes to one exact action: an operator's confirmation
// under HUMAN, or an approver's answer to a Proposal under DISCOVERY. It
// covers a request only when its proposal names the request's control (role
// and name) at a risk no lower than policy computes.
type Consent struct {
	By       string   `json:"by,omitempty"`
	Proposal Proposal `json:"proposal"`
}

func (c *Consent) covers(n *domain.Node, risk domain.Risk) bool {
	if c == nil {
		return false
	}
	p := c.Proposal
	if n != nil && (p.Role != n.Role || p.Name != n.Name) {
		return false
	}
	return orSafe(p.Risk).Rank() >= orSafe(risk).Rank()
}

// Grant is bounded authority delegated in advance: it allows Uses
// irreversible actions on controls whose name contains Match
// (case-insensitive). Each use decrements it.
type Grant struct {
	Match string `json:"match"`
	Uses  int    `json:"uses"`
}

func (g *Grant) matches(name string) bool {
	return g.Uses > 0 && g.Match != "" && strings.Contains(strings.ToLower(name), strings.ToLower(g.Match))
}

// Grants is one run's set of grants. Only policy spends a use, when a grant
// is what authorizes an action. Safe for concurrent use; the nil *Grants
// holds nothing.
type Grants struct {
	mu   sync.Mutex
	list []Grant
}

// NewGrants returns a set holding a copy of gs: the caller's slice is never
// spent.
func NewGrants(gs []Grant) *Grants { return &Grants{list: append([]Grant(nil), gs...)} }

// Remaining returns a copy of the grants with their uses left.
func (g *Grants) Remaining() []Grant {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Grant(nil), g.list...)
}

// covers reports, without spending, whether a grant covers a control name.
func (g *Grants) covers(name string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.list {
		if g.list[i].matches(name) {
			return true
		}
	}
	return false
}

// use spends one use of the first grant that covers name.
func (g *Grants) use(name string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.list {
		if g.list[i].matches(name) {
			g.list[i].Uses--
			return true
		}
	}
	return false
}

// Need is what a proposed action needs before it may be dispatched.
type Need int

// Needs.
const (
	// NeedNothing: Authorize will judge it as it is (spending a grant's use
	// when a grant is what allows it).
	NeedNothing Need = iota
	// NeedConsent: a person must consent to exactly this action.
	NeedConsent
	// NeedProposalOnly: the level only proposes; nothing is performed.
	NeedProposalOnly
)

// Consult tells a caller, before it asks anyone, what a proposed action
// needs under this engine: at DISCOVERY, by the autonomy level and the
// run's grants; at HUMAN, a confirmation of an irreversible action. It
// spends nothing; Authorize decides and spends.
func (e *Engine) Consult(p Proposal, grants *Grants) Need {
	switch e.cfg.Profile {
	case ProfileHuman:
		if p.Risk == domain.RiskIrreversible {
			return NeedConsent
		}
		return NeedNothing
	case ProfileDiscovery:
		lvl := e.cfg.Autonomy
		if lvl == LevelAdvisory {
			return NeedProposalOnly
		}
		if !lvl.needsConsent(p.Risk) || (p.Risk == domain.RiskIrreversible && e.delegated()) {
			return NeedNothing
		}
		if p.Risk == domain.RiskIrreversible && grants.covers(p.Name) {
			return NeedNothing
		}
		return NeedConsent
	}
	return NeedNothing
}

// delegated reports whether a DISCOVERY run's irreversible actions were
// delegated in advance: the sovereign level, or the caller's opt-in
// (AllowIrreversible) at any level that acts.
func (e *Engine) delegated() bool {
	return e.cfg.AllowIrreversible || e.cfg.Autonomy == LevelSovereign
}

// discovery applies the DISCOVERY rules: the autonomy level to a proposed
// action, and to every irreversible one the need for a consent, a grant,
// the sovereign level or the caller's blanket opt-in.
func (e *Engine) discovery(req Request, risk domain.Risk) error {
	lvl := e.cfg.Autonomy
	gated := req.Proposal != nil
	if gated && lvl == LevelAdvisory {
		return deny("autonomy_advisory", domain.CodeApprovalRequired,
			"autonomy level %d only proposes: %s was not performed", lvl, req.Proposal)
	}
	delegated := risk == domain.RiskIrreversible && e.delegated()
	byLevel := gated && lvl.needsConsent(risk) && !delegated
	irreversible := risk == domain.RiskIrreversible && !delegated
	if !byLevel && !irreversible {
		return nil
	}
	if req.Consent.covers(req.Node, risk) {
		return nil
	}
	if risk == domain.RiskIrreversible && req.Grants.use(nodeName(req.Node)) {
		return nil
	}
	if byLevel {
		return deny("autonomy", domain.CodeApprovalRequired,
			"%s needs a consent at autonomy level %d", req.Proposal, lvl)
	}
	return deny("discovery_irreversible", domain.CodeApprovalRequired,
		"discovery may not perform the irreversible action on %q without a grant", nodeName(req.Node))
}

// ParseGrant reads a grant written MATCH:N ("Submit transfer:2"): N
// irreversible actions on controls whose name contains MATCH.
func ParseGrant(s string) (Grant, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return Grant{}, fmt.Errorf("grant %q: want MATCH:N", s)
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return Grant{}, fmt.Errorf("grant %q: want MATCH:N with N a whole number", s)
	}
	return Grant{Match: s[:i], Uses: n}, nil
}
