package receipt

import (
	"regexp"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// Gate is the handoff gate record: the exact decision a person must take
// before the run may pass a gated step, with the inputs it would act on.
type Gate struct {
	SchemaVersion string `json:"schema_version"`
	ConnectorID   string `json:"connector_id"`
	RunID         string `json:"run_id"`
	Capability    string `json:"capability"`
	ContentHash   string `json:"content_hash"`
	// Step is the gated step; Action, Target and Risk say what it does.
	Step   string            `json:"step"`
	Action domain.ActionType `json:"action"`
	Target string            `json:"target,omitempty"`
	Risk   domain.Risk       `json:"risk"`
	// Decision names the decision with its inputs, as a question a person
	// answers with yes or no.
	Decision string `json:"decision"`
	// Inputs are the run's inputs, sensitive ones masked by shape.
	Inputs map[string]string `json:"inputs"`
	// EffectsSent: whether anything elevated reached the application
	// before the gate.
	EffectsSent bool `json:"effects_sent"`
	// Release says how to pass the gate.
	Release string `json:"release"`
}

var inputRef = regexp.MustCompile(`\{input\.([a-z][a-z0-9_]*)\}`)

// newGate builds the gate record of a run that stopped at the first
// unreleased gate of its plan.
func newGate(in RunInput) *Gate {
	rec, c := in.Record, in.Capability
	names, vals := inputs(rec, c)
	g := &Gate{
		SchemaVersion: GateSchemaVersion, ConnectorID: ConnectorID, RunID: rec.RunID, Capability: rec.Capability,
		ContentHash: rec.ContentHash, Inputs: vals, EffectsSent: rec.Effects != nil && rec.Effects.Sent,
	}
	var st *domain.Step
	for _, pg := range in.Plan.Gates {
		if !pg.Released {
			st = c.Step(pg.Step)
			break
		}
	}
	with := make([]string, len(names))
	for i, k := range names {
		with[i] = k + "=" + vals[k]
	}
	if st == nil {
		g.Step, g.Risk = "unknown", domain.RiskSafe
		g.Decision = "Approve continuing " + c.Title + " (" + rec.Capability + ") past its gate with " + strings.Join(with, ", ")
		g.Release = "run again with --release-gate for the gated step"
		return g
	}
	g.Step, g.Action, g.Risk = st.ID, st.Action, stepRisk(st)
	g.Target = target(st, vals)
	if inputRef.MatchString(st.Description) {
		// The author phrased the decision: its placeholders take the
		// (masked) inputs.
		g.Decision = inputRef.ReplaceAllStringFunc(st.Description, func(m string) string {
			return vals[inputRef.FindStringSubmatch(m)[1]]
		})
	} else {
		g.Decision = "Approve the " + string(g.Risk) + " " + string(st.Action)
		if g.Target != "" {
			g.Decision += " on " + g.Target
		}
		g.Decision += " (step " + st.ID + " of " + c.Title + ", " + rec.Capability + ")"
		if len(with) > 0 {
			g.Decision += " with " + strings.Join(with, ", ")
		}
	}
	g.Release = "run again with --release-gate " + st.ID
	if g.Risk == domain.RiskIrreversible {
		g.Release += " --allow-irreversible and an approval of " + rec.ContentHash
	}
	return g
}

// target names a step's target as role "name" (a starts_with/ends_with
// name as "START…END").
func target(st *domain.Step, vals map[string]string) string {
	t := st.Target
	if t == nil {
		return ""
	}
	if t.Name == nil {
		return t.Role
	}
	name := t.Name.Value
	switch {
	case t.Name.Input != "":
		name = vals[t.Name.Input]
	case t.Name.Affix():
		name = t.Name.StartsWith + "…" + t.Name.EndsWith
	}
	return t.Role + ` "` + name + `"`
}
