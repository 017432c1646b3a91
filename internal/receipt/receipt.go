package receipt

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/cuahq/cua/internal/domain"
)

// Receipt outcomes.
const (
	OutcomeCompleted     = "completed"
	OutcomeStoppedAtGate = "stopped_at_gate"
	OutcomeUnknownModal  = "blocked_by_unknown_modal"
	OutcomeNeedsHuman    = "needs_human"
	OutcomeFailed        = "failed"
)

// Receipt is what a run actually did, as compact control facts: codes,
// counts, step ids and output names, never page text, output values or
// messages.
type Receipt struct {
	SchemaVersion string `json:"schema_version"`
	ConnectorID   string `json:"connector_id"`
	RunID         string `json:"run_id"`
	Capability    string `json:"capability"`
	ContentHash   string `json:"content_hash"`
	// Outcome is one of the Outcome* constants.
	Outcome         string             `json:"outcome"`
	RunStatus       domain.RunStatus   `json:"run_status"`
	FailureCode     domain.FailureCode `json:"failure_code,omitempty"`
	BusinessOutcome string             `json:"business_outcome,omitempty"`
	ObservedFacts   Facts              `json:"observed_facts"`
	// Effects lists every elevated or irreversible step and what may have
	// reached the application (invariant 13).
	Effects  []domain.StepEffect `json:"effects"`
	Evidence Handle              `json:"evidence"`
	Next     Writeback           `json:"next_writeback"`
	// GateRecord names the handoff gate record of the bundle (gate.json)
	// when the run stopped at a gate.
	GateRecord string `json:"gate_record,omitempty"`
}

// Facts are what the runtime observed, compactly.
type Facts struct {
	StepsCompleted int `json:"steps_completed"`
	StepsFailed    int `json:"steps_failed"`
	Dispatches     int `json:"dispatches"`
	Recoveries     int `json:"recoveries"`
	// CheckpointReached: the run succeeded and its goal state held.
	CheckpointReached bool `json:"checkpoint_reached"`
	// GatedStepDispatched: a gated step acted (it was released).
	GatedStepDispatched bool `json:"gated_step_dispatched"`
	UnknownModal        bool `json:"unknown_modal"`
	// OutputsExtracted names the outputs read (never their values).
	OutputsExtracted   []string `json:"outputs_extracted"`
	EffectsSent        bool     `json:"effects_sent"`
	EffectsUnconfirmed bool     `json:"effects_unconfirmed"`
	DriftScore         float64  `json:"drift_score"`
	DurationMS         int64    `json:"duration_ms"`
}

// Handle points at the evidence that proves the receipt: the run's own
// bundle, which stays where it was written.
type Handle struct {
	HandleKind string `json:"handle_kind"`
	RunID      string `json:"run_id"`
	// Bundle is the bundle's path relative to the data directory.
	Bundle                string `json:"bundle"`
	Manifest              string `json:"manifest"`
	Screenshots           int    `json:"screenshots"`
	Verify                string `json:"verify"`
	RawEvidenceCopied     bool   `json:"raw_evidence_copied"`
	PrivateSourceRedacted bool   `json:"private_source_redacted"`
}

// Writeback is what the control plane should do next.
type Writeback struct {
	CompleteTodo      bool   `json:"complete_todo"`
	CreateUserGate    bool   `json:"create_user_gate"`
	RecommendedAction string `json:"recommended_action"`
}

// RunInput is what a receipt is built from.
type RunInput struct {
	// Record is the run's record as written (redacted); Capability the
	// capability it ran (inputs bound) and Plan its action plan.
	Record     *domain.RunRecord
	Capability *domain.Capability
	Plan       *Plan
	// UnknownModal: the run stopped on a screen with a dialog or modal no
	// rule declared.
	UnknownModal bool
	// Screenshots is how many masked screenshots the bundle holds.
	Screenshots int
}

// GateFile is the bundle file of a handoff gate record.
const GateFile = "gate.json"

// NewReceipt builds the run's receipt and, when the run stopped at a gate,
// its handoff gate record (else nil). It returns an error naming a missing
// field.
func NewReceipt(in RunInput) (*Receipt, *Gate, error) {
	rec, c := in.Record, in.Capability
	switch {
	case rec == nil:
		return nil, nil, fmt.Errorf("receipt: record: required")
	case c == nil:
		return nil, nil, fmt.Errorf("receipt: capability: required")
	case in.Plan == nil:
		return nil, nil, fmt.Errorf("receipt: plan: required")
	}
	r := &Receipt{
		SchemaVersion: ReceiptSchemaVersion, ConnectorID: ConnectorID, RunID: rec.RunID, Capability: rec.Capability,
		ContentHash: rec.ContentHash, RunStatus: rec.Status, FailureCode: rec.FailureCode, BusinessOutcome: rec.Outcome,
		ObservedFacts: facts(rec, in), Effects: []domain.StepEffect{},
		Evidence: Handle{HandleKind: "cua_run_bundle", RunID: rec.RunID, Bundle: "runs/" + rec.RunID, Manifest: "manifest.json",
			Screenshots: in.Screenshots, Verify: "cua verify " + rec.RunID, PrivateSourceRedacted: true},
	}
	if rec.Effects != nil {
		r.Effects = append(r.Effects, rec.Effects.Steps...)
	}
	var gate *Gate
	switch {
	case rec.FailureCode == domain.CodeGateReached:
		r.Outcome, r.GateRecord = OutcomeStoppedAtGate, GateFile
		gate = newGate(in)
		r.Next = Writeback{CreateUserGate: true, RecommendedAction: gate.Decision}
	case rec.Status == domain.StatusSuccess || rec.Status == domain.StatusBusinessOutcome:
		r.Outcome = OutcomeCompleted
		r.Next = Writeback{CompleteTodo: true, RecommendedAction: "none: the validation target is met (" + in.Plan.ValidationTarget + ")"}
	case in.UnknownModal:
		r.Outcome = OutcomeUnknownModal
		r.Next = Writeback{CreateUserGate: true, RecommendedAction: "a person reviews the dialog the run stopped at (last screenshot of " +
			r.Evidence.Bundle + ") and either declares it in the capability or takes over the session; nothing undeclared was clicked"}
	case rec.Status == domain.StatusNeedsHuman:
		r.Outcome = OutcomeNeedsHuman
		r.Next = Writeback{CreateUserGate: true, RecommendedAction: humanAction(rec)}
	default:
		r.Outcome = OutcomeFailed
		r.Next = Writeback{RecommendedAction: failedAction(rec)}
	}
	return r, gate, nil
}

func facts(rec *domain.RunRecord, in RunInput) Facts {
	f := Facts{Dispatches: rec.DispatchCount, Recoveries: rec.RecoveryAttempts, UnknownModal: in.UnknownModal,
		OutputsExtracted: []string{}, DriftScore: rec.DriftScore, DurationMS: rec.DurationMS}
	gated := map[string]bool{}
	for _, g := range in.Plan.Gates {
		gated[g.Step] = true
	}
	for _, s := range rec.Steps {
		if s.Status == "failed" {
			f.StepsFailed++
		} else {
			f.StepsCompleted++
		}
		if gated[s.ID] && s.Status != "failed" {
			f.GatedStepDispatched = true
		}
	}
	for k := range rec.Outputs {
		f.OutputsExtracted = append(f.OutputsExtracted, k)
	}
	sort.Strings(f.OutputsExtracted)
	f.CheckpointReached = rec.Status == domain.StatusSuccess && in.Capability.Checkpoint != nil
	if rec.Effects != nil {
		f.EffectsSent, f.EffectsUnconfirmed = rec.Effects.Sent, rec.Effects.Unconfirmed
	}
	return f
}

// unconfirmedSteps lists the steps whose effect was sent but not read.
func unconfirmedSteps(rec *domain.RunRecord) []string {
	var out []string
	if rec.Effects != nil {
		for _, s := range rec.Effects.Steps {
			if s.Effect == domain.EffectSentUnconfirmed {
				out = append(out, s.Step)
			}
		}
	}
	return out
}

func humanAction(rec *domain.RunRecord) string {
	if steps := unconfirmedSteps(rec); len(steps) > 0 {
		return "check in the application whether step " + strings.Join(steps, ", ") +
			" took effect before anything is run again; the run must not be retried blindly"
	}
	return fmt.Sprintf("a person takes over the session or updates the capability (%s); nothing irreversible was sent", rec.FailureCode)
}

func failedAction(rec *domain.RunRecord) string {
	if steps := unconfirmedSteps(rec); len(steps) > 0 {
		return "check in the application whether step " + strings.Join(steps, ", ") + " took effect; do not retry blindly"
	}
	if rec.Effects != nil && rec.Effects.Sent {
		return fmt.Sprintf("fix the cause (%s); effects were sent and confirmed, so a new run must not repeat them", rec.FailureCode)
	}
	return fmt.Sprintf("fix the cause (%s) and run again; no effect reached the application", rec.FailureCode)
}

// maskShape masks a sensitive value by shape: digits become '#', letters
// 'x', everything else stays (redact.MaskShape's rule; receipt imports
// only domain).
func maskShape(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsDigit(r):
			return '#'
		case unicode.IsLetter(r):
			return 'x'
		}
		return r
	}, s)
}

// inputs returns the record's inputs as text, sensitive ones masked by
// shape, in name order.
func inputs(rec *domain.RunRecord, c *domain.Capability) ([]string, map[string]string) {
	out := make(map[string]string, len(rec.Inputs))
	for k, v := range rec.Inputs {
		s := fmt.Sprint(v)
		if spec := c.Input(k); spec == nil || spec.Sensitive {
			s = maskShape(s)
		}
		out[k] = s
	}
	names := make([]string, 0, len(out))
	for k := range out {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, out
}
