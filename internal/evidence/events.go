package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cuahq/cua/internal/domain"
)

// Payload is the data of one kind of event: a Go type per kind, one JSON
// shape per kind, each listed in schema/event-log.schema.json. EventType
// is the event's "type".
type Payload interface {
	EventType() string
}

// payloadData encodes p to the JSON object written as an event's data.
// Numbers stay json.Number, so they are written back exactly.
func payloadData(p Payload) (map[string]any, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("evidence: encode %s event: %w", p.EventType(), err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("evidence: %s event is not a JSON object: %w", p.EventType(), err)
	}
	return m, nil
}

// Dispatcher events (runtime).

// ActionDispatched: an authorized action reached the surface.
type ActionDispatched struct {
	Action     domain.ActionType `json:"action"`
	Risk       domain.Risk       `json:"risk"`
	DurationMS int64             `json:"duration_ms"`
	Epoch      uint64            `json:"epoch"`
	Role       string            `json:"role,omitempty"`
	Name       string            `json:"name,omitempty"`
	Frame      string            `json:"frame,omitempty"`
	Strategy   domain.Strategy   `json:"strategy,omitempty"`
	// Value is the value expression as written ({$secret: ref} for a
	// secret, never its value).
	Value string `json:"value,omitempty"`
	URL   string `json:"url,omitempty"`
	// ScreenshotBefore is the bundle-relative path of the masked PNG of
	// the screen an irreversible action was authorized on, taken after
	// its authorization and just before it was sent
	// (screenshots/step-NNN-before.png); empty for any other action, or
	// when the screen could not be painted (a JavaScript dialog is open).
	ScreenshotBefore string `json:"screenshot_before,omitempty"`
}

// DispatchFailed: an authorized action reached the surface, which failed it.
type DispatchFailed struct {
	ActionDispatched
	Error string `json:"error"`
}

// DispatchRefused: the lease check refused an action before dispatch.
type DispatchRefused struct {
	Reason string `json:"reason"`
}

// TargetUnresolved: an action's target did not resolve to one node.
type TargetUnresolved struct {
	Error string `json:"error"`
}

// PolicyDenied: policy refused an action.
type PolicyDenied struct {
	Action domain.ActionType `json:"action"`
	Error  string            `json:"error"`
}

// LandingRefused: the surface landed on a URL outside the allowlist.
type LandingRefused struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

// Replay engine events.

// RunStarted: a run begins: what it runs and what it was given. Every
// run's log has it, a refused run's too (a run_refused follows it).
type RunStarted struct {
	Capability  string `json:"capability"`
	ContentHash string `json:"content_hash"`
	BaseURL     string `json:"base_url"`
	// Inputs are the run's bound inputs: a plain input by its value, an
	// input named in Sensitive as {"hmac_sha256": hex}, a digest keyed by
	// the deployment key (Bundle.Append replaces the value before the event
	// is encoded; it never reaches a file). The manifest signs their digest,
	// and Verify checks record.json's inputs against them.
	Inputs map[string]any `json:"inputs,omitempty"`
	// Sensitive names the inputs whose values must not be written.
	Sensitive []string `json:"-"`
	// Evidence is the run's evidence level (none, decisive, full): the
	// capability's, raised or lowered by the run's --evidence.
	Evidence domain.EvidenceLevel `json:"evidence,omitempty"`
}

// RunRefused: a run was refused before its first dispatch: its failure
// code, the check that refused it (evidence.Check*; empty in logs written
// before checks were named) and why.
type RunRefused struct {
	Code   domain.FailureCode `json:"code"`
	Check  string             `json:"check,omitempty"`
	Reason string             `json:"reason"`
}

// InputRefused: the caller's inputs do not bind.
type InputRefused struct {
	Error string `json:"error"`
}

// RunFinished: the run's end, as in its record.
type RunFinished struct {
	Status      domain.RunStatus   `json:"status"`
	FailureCode domain.FailureCode `json:"failure_code,omitempty"`
	Outcome     string             `json:"outcome,omitempty"`
}

// CapabilityStarted: another capability runs in place (a prerequisite or a
// remedy), pinned by its content hash.
type CapabilityStarted struct {
	Capability  string `json:"capability"`
	ContentHash string `json:"content_hash"`
	File        string `json:"file,omitempty"`
	Why         string `json:"why"`
}

// CapabilityFinished: a capability run in place ended without failing.
type CapabilityFinished struct {
	Capability string `json:"capability"`
}

// StepFinished: one step's result.
type StepFinished struct {
	Status     string          `json:"status"`
	Strategy   domain.Strategy `json:"strategy,omitempty"`
	DurationMS int64           `json:"duration_ms"`
	Risk       domain.Risk     `json:"risk,omitempty"`
	Effect     domain.Effect   `json:"effect,omitempty"`
	// Screenshot is the bundle-relative path of the masked PNG taken after
	// the step acted (Bundle.WriteScreenshot), empty when none was taken
	// (the run's evidence level kept none for this step).
	Screenshot string `json:"screenshot,omitempty"`
	// ObservationSHA256 is the hex SHA-256 of the step's redacted
	// observation (ObservationDigest): the screen the step left, digested
	// whatever the evidence level; empty when the screen could not be
	// read.
	ObservationSHA256 string `json:"observation_sha256,omitempty"`
	// Observation is a short redacted text summary of that screen: its
	// headings and the nodes that appeared since the previous step's
	// (ObservationSummary), at most MaxObservationSummary bytes.
	Observation string `json:"observation,omitempty"`
}

// ScreenshotKept: a masked screenshot was written to the bundle, and
// Reason (a Reason* constant) says why the run's evidence level kept it.
// Every screenshot file a run writes has one.
type ScreenshotKept struct {
	Screenshot string `json:"screenshot"`
	Reason     string `json:"reason"`
}

// ScreenshotAfter: the picture of the screen after an irreversible step
// (StepID) that could not be pictured when the step finished (a
// JavaScript dialog it opened cannot be painted): the first screen painted
// after it, written as screenshots/step-NNN-after.png (NNN the step's
// number, beside its step-NNN-before.png). Why says so.
type ScreenshotAfter struct {
	Screenshot string `json:"screenshot"`
	Why        string `json:"why"`
}

// GateReached: a gated step stopped the run for human review.
type GateReached struct {
	Description string `json:"description,omitempty"`
}

// Reanchored: after a remedy, the run resumes at an earlier step.
type Reanchored struct {
	From string `json:"from"`
}

// Reentered: a run on a warm session found the capability's reentry
// condition on screen and starts at Step, without navigating to the
// entrypoint and without its prerequisites.
type Reentered struct {
	Step string `json:"step"`
}

// HumanDelta: what a person changed on the screen during a takeover,
// judged when the session came back: the URL before and after, the nodes
// that appeared and went (role "name", with the frame; at most
// MaxDeltaNodes of each, with the totals) and the values edited (a
// sensitive or password node's values are left out, Sensitive says so).
// Written through the bundle's redactor like every event.
type HumanDelta struct {
	URLBefore    string      `json:"url_before"`
	URLAfter     string      `json:"url_after"`
	Added        []string    `json:"added"`
	Removed      []string    `json:"removed"`
	Edited       []ValueEdit `json:"edited"`
	AddedTotal   int         `json:"added_total"`
	RemovedTotal int         `json:"removed_total"`
	EditedTotal  int         `json:"edited_total"`
}

// MaxDeltaNodes bounds each list of a HumanDelta.
const MaxDeltaNodes = 25

// ValueEdit is one control whose value or checked state a person changed.
type ValueEdit struct {
	Node      string `json:"node"`
	Before    string `json:"before,omitempty"`
	After     string `json:"after,omitempty"`
	Sensitive bool   `json:"sensitive,omitempty"`
}

// ReentryDeclined: a run on a warm session did not start at the reentry
// step (Reason says why) and enters at the entrypoint.
type ReentryDeclined struct {
	Reason string `json:"reason"`
}

// Recovery: a declared recovery rule is applied.
type Recovery struct {
	Rule    string        `json:"rule"`
	Remedy  domain.Remedy `json:"remedy"`
	Attempt int           `json:"attempt"`
}

// RecoveryExhausted: a recovery rule matched past its budget.
type RecoveryExhausted struct {
	Rule        string `json:"rule"`
	MaxAttempts int    `json:"max_attempts"`
}

// ReloadRefused: a reload remedy would re-send a form and its rule refuses.
type ReloadRefused struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// ReloadAsGet: a reload remedy goes back to the entrypoint by GET instead
// of re-sending a form.
type ReloadAsGet struct {
	Rule string `json:"rule"`
	URL  string `json:"url"`
}

// Extracted: an output was read (its value is in the record, not here).
type Extracted struct {
	Output   string          `json:"output"`
	Strategy domain.Strategy `json:"strategy"`
}

// DispatchExplained: a failed dispatch was explained by a recovery rule.
type DispatchExplained struct {
	Rule string `json:"rule"`
}

// DispatchFailedClassify: the screen after a failed dispatch could not be
// classified.
type DispatchFailedClassify struct {
	Error string `json:"error"`
}

// EffectLanded: a step sent before a remedy turned out to have landed.
type EffectLanded struct {
	Risk domain.Risk `json:"risk"`
}

// EffectUnknown: whether a sent step landed cannot be known.
type EffectUnknown struct {
	Risk domain.Risk `json:"risk"`
	Why  string      `json:"why"`
}

// EffectReadBack: an effect contract's read-back judged a sent step's
// effect (issue 26): the verdict (verified, refuted, indeterminate), the
// pinned read-back, and the rows matching the contract and the others in
// the pre-read and the post-read. Evidence holds counts and column names,
// never a cell's value.
type EffectReadBack struct {
	Kind           string        `json:"kind"`
	Verdict        domain.Effect `json:"verdict"`
	Via            string        `json:"via"`
	ContentHash    string        `json:"content_hash,omitempty"`
	MatchingBefore int           `json:"matching_before"`
	MatchingAfter  int           `json:"matching_after"`
	OthersBefore   int           `json:"others_before"`
	OthersAfter    int           `json:"others_after"`
	Evidence       string        `json:"evidence"`
}

// Discovery events (agent).

// ApprovalRequired: an action was held for a consent it did not get.
type ApprovalRequired struct {
	Proposal Proposal `json:"proposal"`
}

// Proposal is the action held, as in policy.Proposal (evidence does not
// import policy).
type Proposal struct {
	Step   int         `json:"step"`
	Action string      `json:"action"`
	Role   string      `json:"role,omitempty"`
	Name   string      `json:"name,omitempty"`
	Text   string      `json:"text,omitempty"`
	Risk   domain.Risk `json:"risk"`
}

// InvalidTurn: a model's answer broke the action contract.
type InvalidTurn struct {
	Error   string `json:"error"`
	Attempt int    `json:"attempt"`
}

// DiscoveryFinished: how a discovery run ended.
type DiscoveryFinished struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Steps  int    `json:"steps"`
	Tokens int    `json:"tokens"`
}

// Event types.
func (ActionDispatched) EventType() string       { return "action_dispatched" }
func (DispatchFailed) EventType() string         { return "dispatch_failed" }
func (DispatchRefused) EventType() string        { return "dispatch_refused" }
func (TargetUnresolved) EventType() string       { return "target_unresolved" }
func (PolicyDenied) EventType() string           { return "policy_denied" }
func (LandingRefused) EventType() string         { return "landing_refused" }
func (RunStarted) EventType() string             { return "run_started" }
func (RunRefused) EventType() string             { return "run_refused" }
func (InputRefused) EventType() string           { return "input_refused" }
func (RunFinished) EventType() string            { return "run_finished" }
func (CapabilityStarted) EventType() string      { return "capability_started" }
func (CapabilityFinished) EventType() string     { return "capability_finished" }
func (StepFinished) EventType() string           { return "step_finished" }
func (ScreenshotAfter) EventType() string        { return "screenshot_after" }
func (ScreenshotKept) EventType() string         { return "screenshot_kept" }
func (GateReached) EventType() string            { return "gate_reached" }
func (Reanchored) EventType() string             { return "reanchored" }
func (Reentered) EventType() string              { return "reentered" }
func (HumanDelta) EventType() string             { return "human_delta" }
func (ReentryDeclined) EventType() string        { return "reentry_declined" }
func (Recovery) EventType() string               { return "recovery" }
func (RecoveryExhausted) EventType() string      { return "recovery_exhausted" }
func (ReloadRefused) EventType() string          { return "reload_refused" }
func (ReloadAsGet) EventType() string            { return "reload_as_get" }
func (Extracted) EventType() string              { return "extracted" }
func (DispatchExplained) EventType() string      { return "dispatch_explained" }
func (DispatchFailedClassify) EventType() string { return "dispatch_failed_classify" }
func (EffectLanded) EventType() string           { return "effect_landed" }
func (EffectUnknown) EventType() string          { return "effect_unknown" }
func (EffectReadBack) EventType() string         { return "effect_read_back" }
func (ApprovalRequired) EventType() string       { return "approval_required" }
func (InvalidTurn) EventType() string            { return "invalid_turn" }
func (DiscoveryFinished) EventType() string      { return "discovery_finished" }

// Kinds lists one zero value of every event kind, in the order of the
// event log's schema.
func Kinds() []Payload {
	return []Payload{
		ActionDispatched{}, DispatchFailed{}, DispatchRefused{}, TargetUnresolved{}, PolicyDenied{}, LandingRefused{},
		RunStarted{}, RunRefused{}, InputRefused{}, RunFinished{}, CapabilityStarted{}, CapabilityFinished{},
		StepFinished{}, ScreenshotAfter{}, ScreenshotKept{}, GateReached{}, HumanDelta{}, Reanchored{}, Reentered{}, ReentryDeclined{}, Recovery{}, RecoveryExhausted{}, ReloadRefused{}, ReloadAsGet{},
		Extracted{}, DispatchExplained{}, DispatchFailedClassify{}, EffectLanded{}, EffectUnknown{}, EffectReadBack{},
		ApprovalRequired{}, InvalidTurn{}, DiscoveryFinished{},
	}
}
