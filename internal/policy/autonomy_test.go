package policy_test

import (
	"slices"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

// TestAutonomy: the autonomy level, grants and consents decide a proposed
// discovery action; Consult says what is needed without spending, and
// Authorize decides and spends a grant's use only when the grant is what
// allows the action.
func TestAutonomy(t *testing.T) {
	t.Parallel()
	transfer := button("Submit transfer")
	save := button("Save")
	search := button("Search")
	consent := func(n *domain.Node, r domain.Risk) *policy.Consent {
		return &policy.Consent{By: "ops", Proposal: policy.Proposal{Action: "click", Role: n.Role, Name: n.Name, Risk: r}}
	}
	tests := []struct {
		name     string
		level    policy.Level
		node     *domain.Node
		risk     domain.Risk
		grants   []policy.Grant
		consent  *policy.Consent
		wantNeed policy.Need
		wantRule string // "" authorized
		wantUses []int
		engine   bool // the engine's own action: the request carries no proposal
	}{
		{name: "advisory proposes only", level: policy.LevelAdvisory, node: search, risk: domain.RiskSafe,
			wantNeed: policy.NeedProposalOnly, wantRule: "autonomy_advisory"},
		{name: "confirm each: a safe action needs a consent", level: policy.LevelConfirmEach, node: search, risk: domain.RiskSafe,
			wantNeed: policy.NeedConsent, wantRule: "autonomy"},
		{name: "confirm each with a consent", level: policy.LevelConfirmEach, node: search, risk: domain.RiskSafe,
			consent: consent(search, domain.RiskSafe), wantNeed: policy.NeedConsent},
		{name: "confirm risky: safe goes", level: policy.LevelConfirmRisky, node: search, risk: domain.RiskSafe, wantNeed: policy.NeedNothing},
		{name: "confirm risky: elevated is held", level: policy.LevelConfirmRisky, node: save, risk: domain.RiskElevated,
			wantNeed: policy.NeedConsent, wantRule: "autonomy"},
		{name: "confirm risky: a grant covers an irreversible action", level: policy.LevelConfirmRisky, node: transfer, risk: domain.RiskIrreversible,
			grants: []policy.Grant{{Match: "Submit transfer", Uses: 1}}, wantNeed: policy.NeedNothing, wantUses: []int{0}},
		{name: "auto: elevated goes", level: policy.LevelAuto, node: save, risk: domain.RiskElevated, wantNeed: policy.NeedNothing},
		{name: "auto: irreversible without grant or consent", level: policy.LevelAuto, node: transfer, risk: domain.RiskIrreversible,
			grants: []policy.Grant{{Match: "Delete", Uses: 5}, {Match: "Submit transfer", Uses: 0}}, wantNeed: policy.NeedConsent,
			wantRule: "autonomy", wantUses: []int{5, 0}},
		{name: "auto: a grant's match ignores case", level: policy.LevelAuto, node: transfer, risk: domain.RiskIrreversible,
			grants: []policy.Grant{{Match: "submit TRANSFER", Uses: 2}}, wantNeed: policy.NeedNothing, wantUses: []int{1}},
		{name: "auto: a consent spends no grant", level: policy.LevelAuto, node: transfer, risk: domain.RiskIrreversible,
			grants: []policy.Grant{{Match: "Submit", Uses: 1}}, consent: consent(transfer, domain.RiskIrreversible),
			wantNeed: policy.NeedNothing, wantUses: []int{1}},
		{name: "a consent to another control covers nothing", level: policy.LevelAuto, node: transfer, risk: domain.RiskIrreversible,
			consent: consent(save, domain.RiskIrreversible), wantNeed: policy.NeedConsent, wantRule: "autonomy"},
		{name: "a consent at a lower risk covers nothing", level: policy.LevelAuto, node: transfer, risk: domain.RiskIrreversible,
			consent: consent(transfer, domain.RiskSafe), wantNeed: policy.NeedConsent, wantRule: "autonomy"},
		{name: "sovereign: irreversible goes", level: policy.LevelSovereign, node: transfer, risk: domain.RiskIrreversible,
			wantNeed: policy.NeedNothing},
		{name: "an engine action carries no proposal: irreversible still needs a grant", level: policy.LevelAuto, node: transfer,
			risk: domain.RiskIrreversible, engine: true, wantNeed: policy.NeedConsent, wantRule: "discovery_irreversible"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := mustEngine(t, policy.Config{Profile: policy.ProfileDiscovery, Autonomy: tt.level})
			prop := policy.Proposal{Action: "click", Role: tt.node.Role, Name: tt.node.Name, Risk: tt.risk}
			before := slices.Clone(tt.grants)
			grants := policy.NewGrants(tt.grants)
			if got := e.Consult(prop, grants); got != tt.wantNeed {
				t.Errorf("Consult = %d, want %d", got, tt.wantNeed)
			}
			req := policy.Request{Action: domain.Action{Type: domain.ActClick, StepID: "s", Risk: tt.risk},
				Node: tt.node, Consent: tt.consent, Grants: grants}
			if !tt.engine {
				req.Proposal = &prop
			}
			_, err := e.Authorize(req)
			if tt.wantRule != "" {
				wantDenied(t, err, tt.wantRule, domain.CodeApprovalRequired)
			} else if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			left := grants.Remaining()
			for i, want := range tt.wantUses {
				if left[i].Uses != want {
					t.Errorf("grant %d has %d uses left, want %d", i, left[i].Uses, want)
				}
			}
			if !slices.Equal(tt.grants, before) {
				t.Errorf("the caller's grants were spent: %+v, was %+v", tt.grants, before)
			}
		})
	}
}

// TestAutonomyLevelIsValidated: a level outside 0-4 is refused by New.
func TestAutonomyLevelIsValidated(t *testing.T) {
	t.Parallel()
	for _, l := range []policy.Level{-1, 5} {
		if _, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, Autonomy: l}); err == nil {
			t.Errorf("New accepted autonomy level %d", l)
		}
	}
}

// TestConsultHuman: under HUMAN an irreversible action needs the operator's
// consent, and nothing else does.
func TestConsultHuman(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, policy.Config{Profile: policy.ProfileHuman})
	if got := e.Consult(policy.Proposal{Risk: domain.RiskIrreversible}, nil); got != policy.NeedConsent {
		t.Errorf("irreversible: Consult = %d, want NeedConsent", got)
	}
	if got := e.Consult(policy.Proposal{Risk: domain.RiskElevated}, nil); got != policy.NeedNothing {
		t.Errorf("elevated: Consult = %d, want NeedNothing", got)
	}
}

// TestSovereignDelegatesOnlyIrreversible: --sovereign (AllowIrreversible
// under DISCOVERY) lets irreversible actions go at any acting level, while
// the level still holds an elevated action for a consent.
func TestSovereignDelegatesOnlyIrreversible(t *testing.T) {
	t.Parallel()
	e := mustEngine(t, policy.Config{Profile: policy.ProfileDiscovery, Autonomy: policy.LevelConfirmRisky, AllowIrreversible: true})
	for _, tt := range []struct {
		node     *domain.Node
		risk     domain.Risk
		wantNeed policy.Need
	}{
		{button("Submit transfer"), domain.RiskIrreversible, policy.NeedNothing},
		{button("Save"), domain.RiskElevated, policy.NeedConsent},
	} {
		prop := policy.Proposal{Action: "click", Role: tt.node.Role, Name: tt.node.Name, Risk: tt.risk}
		if got := e.Consult(prop, nil); got != tt.wantNeed {
			t.Errorf("%s: Consult = %d, want %d", tt.node.Name, got, tt.wantNeed)
		}
		_, err := e.Authorize(policy.Request{Action: domain.Action{Type: domain.ActClick, StepID: "s", Risk: tt.risk}, Node: tt.node, Proposal: &prop})
		if tt.wantNeed == policy.NeedNothing && err != nil {
			t.Errorf("%s: Authorize: %v", tt.node.Name, err)
		}
		if tt.wantNeed == policy.NeedConsent {
			wantDenied(t, err, "autonomy", domain.CodeApprovalRequired)
		}
	}
}
