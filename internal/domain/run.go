package domain

import (
	"errors"
	"fmt"
)

// RunStatus is a run's terminal state.
type RunStatus string

// Run statuses.
const (
	StatusSuccess         RunStatus = "SUCCESS"
	StatusBusinessOutcome RunStatus = "BUSINESS_OUTCOME"
	StatusFailed          RunStatus = "FAILED"
	StatusNeedsHuman      RunStatus = "NEEDS_HUMAN"
	StatusRunning         RunStatus = "RUNNING"
	// StatusAbandoned is the run index's word for a run whose process died
	// before it ended (a killed worker's attempt, found by the attempt that
	// rescued its job); its record keeps the effects known so far.
	StatusAbandoned RunStatus = "ABANDONED"
)

// ExitCode maps a status to the process exit code of DESIGN.md: 0 for
// SUCCESS and BUSINESS_OUTCOME, 2 for NEEDS_HUMAN, 1 otherwise.
func (s RunStatus) ExitCode() int {
	switch s {
	case StatusSuccess, StatusBusinessOutcome:
		return 0
	case StatusNeedsHuman:
		return 2
	}
	return 1
}

// OutcomeClass partitions what a run can observe.
type OutcomeClass string

// Outcome classes.
const (
	ClassExpected          OutcomeClass = "EXPECTED"
	ClassBusinessOutcome   OutcomeClass = "BUSINESS_OUTCOME"
	ClassRecoverable       OutcomeClass = "RECOVERABLE"
	ClassRecoveryExhausted OutcomeClass = "RECOVERY_EXHAUSTED"
	ClassUnexpectedState   OutcomeClass = "UNEXPECTED_STATE"
)

// FailureCode says why a run did not succeed. Codes are data: callers branch
// on them, people read them.
type FailureCode string

// Failure codes.
const (
	CodeInternal           FailureCode = "INTERNAL"
	CodeInputInvalid       FailureCode = "INPUT_INVALID"
	CodeCapabilityInvalid  FailureCode = "CAPABILITY_INVALID"
	CodeHashMismatch       FailureCode = "CONTENT_HASH_MISMATCH"
	CodeTargetNotFound     FailureCode = "TARGET_NOT_FOUND"
	CodeTargetAmbiguous    FailureCode = "TARGET_AMBIGUOUS"
	CodeUnexpectedState    FailureCode = "UNEXPECTED_STATE"
	CodeRecoveryExhausted  FailureCode = "RECOVERY_EXHAUSTED"
	CodeCheckpointFailed   FailureCode = "CHECKPOINT_FAILED"
	CodeOutputInvalid      FailureCode = "OUTPUT_INVALID"
	CodePolicyDenied       FailureCode = "POLICY_DENIED"
	CodeApprovalRequired   FailureCode = "APPROVAL_REQUIRED"
	CodeDomainNotAllowed   FailureCode = "DOMAIN_NOT_ALLOWED"
	CodeLeaseLost          FailureCode = "LEASE_LOST"
	CodeGateReached        FailureCode = "GATE_REACHED"
	CodeTimeout            FailureCode = "TIMEOUT"
	CodeBudgetExceeded     FailureCode = "BUDGET_EXCEEDED"
	CodeSurfaceCrashed     FailureCode = "SURFACE_CRASHED"
	CodeSurfaceError       FailureCode = "SURFACE_ERROR"
	CodeSecretUnavailable  FailureCode = "SECRET_UNAVAILABLE"
	CodeCanceled           FailureCode = "CANCELED"
	CodePrerequisiteFailed FailureCode = "PREREQUISITE_FAILED"
	// CodeEffectUnknown: an elevated or irreversible step was sent and the
	// screen cannot tell whether it took effect; it is never sent again.
	CodeEffectUnknown FailureCode = "EFFECT_UNKNOWN"
)

// Error is an error carrying a failure code and a public message.
type Error struct {
	Code    FailureCode
	Message string
	Err     error
}

// Errorf returns an *Error with a formatted message.
func Errorf(code FailureCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error that wraps err.
func Wrap(code FailureCode, err error, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message != "" {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Code, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code of the first *Error in err's chain, "" for nil
// and CodeInternal for any other error.
func ErrorCode(err error) FailureCode {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Actor says who caused an action.
type Actor string

// Actors.
const (
	ActorAutomation Actor = "automation"
	ActorHuman      Actor = "human"
	ActorAgent      Actor = "agent"
)

// Action is one request to act on a surface, before resolution and
// authorization.
type Action struct {
	Type   ActionType        `json:"type"`
	StepID string            `json:"step_id,omitempty"`
	Target *TargetDescriptor `json:"target,omitempty"`
	Value  *ValueExpr        `json:"value,omitempty"`
	Key    string            `json:"key,omitempty"`
	URL    string            `json:"url,omitempty"`
	// X and Y locate raw_input pointer events in page coordinates.
	X     float64 `json:"x,omitempty"`
	Y     float64 `json:"y,omitempty"`
	Risk  Risk    `json:"risk,omitempty"`
	Actor Actor   `json:"actor"`
}

// Effect says whether an elevated or irreversible step's action reached the
// application (DESIGN invariant 13).
type Effect string

// Effects, in increasing order of what an operator must check.
const (
	// EffectNotSent: the action was never dispatched.
	EffectNotSent Effect = "not_sent"
	// EffectConfirmed: the action was dispatched and its postcondition held.
	EffectConfirmed Effect = "confirmed"
	// EffectSentUnconfirmed: the action was (or may have been) dispatched and
	// nothing on screen confirmed its result.
	EffectSentUnconfirmed Effect = "sent_unconfirmed"
)

// Sent reports whether the action may have reached the application.
func (e Effect) Sent() bool { return e == EffectConfirmed || e == EffectSentUnconfirmed }

// StepEffect is one elevated or irreversible step's effect.
type StepEffect struct {
	Step   string `json:"step"`
	Risk   Risk   `json:"risk"`
	Effect Effect `json:"effect"`
	// Verdict is the read-back's verdict on the step's effect contracts
	// (verified, refuted or indeterminate), with Evidence saying what the
	// read-back showed; both empty when the step declares none or was not sent.
	Verdict  Effect `json:"verdict,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

// Effects summarises a run's elevated and irreversible steps: whether any
// was sent, whether any is unconfirmed, and each one.
type Effects struct {
	// Sent is true when any elevated or irreversible action may have reached
	// the application; such a run must never be retried blindly.
	Sent bool `json:"sent"`
	// Unconfirmed is true when a sent action's result was not read.
	Unconfirmed bool         `json:"unconfirmed"`
	Steps       []StepEffect `json:"steps"`
}

// StepResult is the record of one executed step.
type StepResult struct {
	ID     string     `json:"id"`
	Action ActionType `json:"action"`
	Status string     `json:"status"`
	// Risk and Effect are set on elevated and irreversible steps.
	Risk       Risk        `json:"risk,omitempty"`
	Effect     Effect      `json:"effect,omitempty"`
	Strategy   Strategy    `json:"strategy,omitempty"`
	Drifted    bool        `json:"drifted,omitempty"`
	DurationMS int64       `json:"duration_ms"`
	Attempts   int         `json:"attempts"`
	Failure    FailureCode `json:"failure_code,omitempty"`
	Message    string      `json:"message,omitempty"`
}

// RunRecord is the durable summary of one run.
type RunRecord struct {
	SchemaVersion int       `json:"schema_version"`
	RunID         string    `json:"run_id"`
	Capability    string    `json:"capability"`
	ContentHash   string    `json:"content_hash"`
	Status        RunStatus `json:"status"`
	ExitCode      int       `json:"exit_code"`
	// Effects leads the record when the run has an elevated or irreversible
	// step: what may have reached the application.
	Effects          *Effects          `json:"effects,omitempty"`
	Outcome          string            `json:"outcome,omitempty"`
	FailureCode      FailureCode       `json:"failure_code,omitempty"`
	Message          string            `json:"message,omitempty"`
	Inputs           map[string]any    `json:"inputs,omitempty"`
	Outputs          map[string]any    `json:"outputs,omitempty"`
	Returns          map[string]string `json:"returns,omitempty"`
	RecoveryAttempts int               `json:"recovery_attempts"`
	DispatchCount    int               `json:"dispatch_count"`
	DriftScore       float64           `json:"drift_score"`
	StrategyMix      map[Strategy]int  `json:"strategy_mix,omitempty"`
	StartedAt        string            `json:"started_at"`
	FinishedAt       string            `json:"finished_at,omitempty"`
	DurationMS       int64             `json:"duration_ms"`
	Steps            []StepResult      `json:"steps"`
	BaseURL          string            `json:"base_url,omitempty"`
}

// TraceStep is one acted (or attempted) step of a discovery run, as the
// recorder compiles it.
type TraceStep struct {
	Index  int    `json:"index"`
	Action Action `json:"action"`
	// Target is the descriptor synthesized for the acted-on node and
	// re-resolved against the same snapshot.
	Target *TargetDescriptor `json:"target,omitempty"`
	// Node is the acted-on node as observed before the action.
	Node *Node `json:"node,omitempty"`
	// Literal is the text typed or selected, when it was a literal; inputs
	// and secrets are referenced through Action.Value instead.
	Literal string `json:"literal,omitempty"`
	// Into and Extracted name an extraction and its raw text.
	Into      string `json:"into,omitempty"`
	Extracted string `json:"extracted,omitempty"`
	// Verdict is "ok", "skipped" (a failed dispatch), "denied" (policy) or
	// "unverified" (no witness agreed).
	Verdict string `json:"verdict"`
	// Postcondition is what the agent observed to hold after the action
	// (a new heading, a field value, a URL), if anything did.
	Postcondition *Predicate `json:"postcondition,omitempty"`
	URLBefore     string     `json:"url_before,omitempty"`
	Tokens        int        `json:"tokens,omitempty"`
}

// Trace is a whole discovery run, the recorder's input.
type Trace struct {
	Goal    string      `json:"goal"`
	BaseURL string      `json:"base_url"`
	Surface Surface     `json:"surface"`
	Model   string      `json:"model"`
	RunID   string      `json:"run_id"`
	Tokens  int         `json:"tokens"`
	Steps   []TraceStep `json:"steps"`
	// Outcome is a business outcome the agent declared, with the predicate
	// that shows it.
	Outcome *Outcome `json:"outcome,omitempty"`
	// Checkpoint is the state the agent claimed and the audit confirmed.
	Checkpoint *Predicate `json:"checkpoint,omitempty"`
	// Inputs maps goal literals the agent typed to input names.
	Inputs map[string]string `json:"inputs,omitempty"`
	// Prerequisites are capabilities the run called (sign-on).
	Prerequisites []Prerequisite `json:"prerequisites,omitempty"`
	Finished      bool           `json:"finished"`
}
