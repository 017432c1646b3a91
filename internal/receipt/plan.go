package receipt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// Plan is the action plan of one run: the middle-grained unit a control
// plane schedules, derived from the capability and the run's options,
// never from free text.
type Plan struct {
	SchemaVersion string `json:"schema_version"`
	ConnectorID   string `json:"connector_id"`
	RunID         string `json:"run_id"`
	Capability    string `json:"capability"`
	ContentHash   string `json:"content_hash"`
	// ActionUnit is "replay_to_checkpoint", or "replay_until_gate" when an
	// unreleased gate stops the run before its end.
	ActionUnit       string     `json:"action_unit"`
	AllowedActions   []string   `json:"allowed_actions"`
	ForbiddenActions []string   `json:"forbidden_actions"`
	Gates            []PlanGate `json:"gates"`
	StopCondition    string     `json:"stop_condition"`
	ValidationTarget string     `json:"validation_target"`
}

// PlanGate is one gated step and whether this run may pass it.
type PlanGate struct {
	Step     string      `json:"step"`
	Risk     domain.Risk `json:"risk"`
	Released bool        `json:"released"`
}

// PlanInput is what a plan is derived from.
type PlanInput struct {
	RunID       string
	Capability  *domain.Capability
	ContentHash string
	// ReleasedGates are the gated step ids a reviewer released;
	// AllowIrreversible and Approved say whether an irreversible step may
	// be dispatched at all.
	ReleasedGates     []string
	AllowIrreversible bool
	Approved          bool
}

// NewPlan derives the run's action plan. It returns an error when the
// capability is missing.
func NewPlan(in PlanInput) (*Plan, error) {
	c := in.Capability
	if c == nil {
		return nil, fmt.Errorf("receipt: plan: capability: required")
	}
	p := &Plan{
		SchemaVersion: PlanSchemaVersion, ConnectorID: ConnectorID, RunID: in.RunID, Capability: c.Ref(),
		ContentHash: in.ContentHash, ActionUnit: "replay_to_checkpoint", Gates: []PlanGate{},
	}
	stopAt := ""
	for i := range c.Steps {
		st := &c.Steps[i]
		if !st.Gate {
			continue
		}
		released := slices.Contains(in.ReleasedGates, st.ID)
		p.Gates = append(p.Gates, PlanGate{Step: st.ID, Risk: stepRisk(st), Released: released})
		if !released && stopAt == "" {
			stopAt = st.ID
		}
	}
	p.AllowedActions = allowedActions(c, stopAt)
	p.ForbiddenActions = forbiddenActions(c, stopAt, in.AllowIrreversible && in.Approved)
	stops := []string{"an undeclared screen, modal or dialog (fail closed, never clicked through)",
		fmt.Sprintf("max_steps=%d or max_duration_ms=%d", c.Policy.MaxSteps, c.Policy.MaxDurationMS)}
	if stopAt != "" {
		p.ActionUnit = "replay_until_gate"
		stops = append([]string{"the gate before step " + stopAt}, stops...)
	}
	if len(c.Outcomes) > 0 {
		codes := make([]string, len(c.Outcomes))
		for i, o := range c.Outcomes {
			codes[i] = o.Code
		}
		stops = append(stops, "a declared business outcome ("+strings.Join(codes, ", ")+")")
	}
	p.StopCondition = "stop at " + strings.Join(stops, "; or ")
	p.ValidationTarget = validationTarget(c, stopAt)
	return p, nil
}

func stepRisk(st *domain.Step) domain.Risk {
	if st.Risk == "" {
		return domain.RiskSafe
	}
	return st.Risk
}

// allowedActions lists the kinds of action the capability may take and
// where, up to the gate that stops it.
func allowedActions(c *domain.Capability, stopAt string) []string {
	var kinds []string
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.ID == stopAt {
			break
		}
		if k := string(st.Action); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	out := []string{"open the entrypoint of " + c.Ref()}
	for _, k := range kinds {
		out = append(out, k+" on the targets its steps declare")
	}
	domains := "its base URL's host"
	if len(c.Policy.AllowedDomains) > 0 {
		domains = strings.Join(c.Policy.AllowedDomains, ", ")
	}
	out = append(out, "navigate within "+domains, "run its declared recovery remedies", "capture masked screenshots into its own bundle")
	return out
}

// forbiddenActions lists what the run must not do.
func forbiddenActions(c *domain.Capability, stopAt string, irreversibleOK bool) []string {
	out := []string{}
	if stopAt != "" {
		out = append(out, "pass the gate before step "+stopAt+" without a reviewer's release")
	}
	if !irreversibleOK {
		out = append(out, "dispatch an irreversible action without --allow-irreversible and an approval of this exact content")
	}
	return append(out,
		"act on a target its steps do not declare",
		"click through an undeclared dialog or modal",
		"navigate outside its allowed domains",
		"export cookies or copy credentials",
		"copy raw page content or unmasked screenshots out of the run",
		"retry a step whose effect was sent but not confirmed")
}

// validationTarget is what proves the run did its job.
func validationTarget(c *domain.Capability, stopAt string) string {
	if stopAt != "" {
		return "the gate before step " + stopAt + " is reached and that step remains undispatched"
	}
	var parts []string
	if c.Checkpoint != nil {
		if c.Checkpoint.Description != "" {
			parts = append(parts, "the checkpoint holds ("+c.Checkpoint.Description+")")
		} else {
			parts = append(parts, "the checkpoint predicate holds")
		}
	}
	var outs []string
	for _, o := range c.Outputs {
		if o.Required || o.Source.Step != "" {
			outs = append(outs, o.Name)
		}
	}
	if len(outs) > 0 {
		parts = append(parts, "outputs "+strings.Join(outs, ", ")+" are extracted and valid")
	}
	if len(parts) == 0 {
		return "every step ran and its postcondition held"
	}
	return strings.Join(parts, " and ")
}
