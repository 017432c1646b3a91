// Package domain holds cua's pure types: the capability artifact, target
// descriptors, predicates, snapshots of a user interface, run records and the
// failure taxonomy.
//
// The package does no I/O, reads no clock and draws no random numbers
// (DESIGN invariant 10, checked by internal/archtest). Everything that needs
// time or identity receives it as a value.
package domain

// SchemaVersion is the capability format version this build reads and writes.
const SchemaVersion = 1

// Surface names the kind of application a capability drives.
type Surface string

// Surfaces.
const (
	SurfaceWeb     Surface = "web"
	SurfaceState   Surface = "state"
	SurfaceDesktop Surface = "desktop"
)

// Risk is a risk tier. Tiers are ordered: safe < elevated < irreversible.
type Risk string

// Risk tiers.
const (
	RiskSafe         Risk = "safe"
	RiskElevated     Risk = "elevated"
	RiskIrreversible Risk = "irreversible"
)

// Rank orders risk tiers; an unknown tier ranks highest so it fails closed.
func (r Risk) Rank() int {
	switch r {
	case RiskSafe, "":
		return 0
	case RiskElevated:
		return 1
	case RiskIrreversible:
		return 2
	}
	return 3
}

// MaxRisk returns the highest of the given tiers.
func MaxRisk(rs ...Risk) Risk {
	out := RiskSafe
	for _, r := range rs {
		if r.Rank() > out.Rank() {
			out = r
		}
	}
	return out
}

// Capability is a compiled, typed, content-hashed workflow. Once sealed, the
// pair ID@Version is frozen and ContentHash covers every other field.
type Capability struct {
	SchemaVersion int              `json:"schema_version"`
	ID            string           `json:"id"`
	Version       string           `json:"version"`
	Title         string           `json:"title"`
	Description   string           `json:"description,omitempty"`
	Surface       Surface          `json:"surface"`
	Entrypoint    Entrypoint       `json:"entrypoint"`
	Inputs        []InputSpec      `json:"inputs,omitempty"`
	Outputs       []OutputSpec     `json:"outputs,omitempty"`
	Risk          Risk             `json:"risk"`
	Prerequisites []Prerequisite   `json:"prerequisites,omitempty"`
	Steps         []Step           `json:"steps"`
	Reentry       *Reentry         `json:"reentry,omitempty"`
	Checkpoint    *Checkpoint      `json:"checkpoint,omitempty"`
	Identity      *Identity        `json:"identity,omitempty"`
	Outcomes      []Outcome        `json:"outcomes,omitempty"`
	Recovery      []RecoveryRule   `json:"recovery,omitempty"`
	Escalation    Escalation       `json:"escalation"`
	Policy        CapabilityPolicy `json:"policy"`
	// Evidence is how many screenshots a run keeps (evidence.go); absent
	// means decisive and is left out of the content hash.
	Evidence    EvidenceLevel `json:"evidence,omitempty"`
	Provenance  *Provenance   `json:"provenance,omitempty"`
	ContentHash string        `json:"content_hash,omitempty"`
}

// Ref returns "id@version".
func (c *Capability) Ref() string { return c.ID + "@" + c.Version }

// Sealed reports whether the capability carries a content hash. A capability
// without one is a draft.
func (c *Capability) Sealed() bool { return c.ContentHash != "" }

// Step returns the step with the given id, or nil.
func (c *Capability) Step(id string) *Step {
	for i := range c.Steps {
		if c.Steps[i].ID == id {
			return &c.Steps[i]
		}
	}
	return nil
}

// Input returns the input spec with the given name, or nil.
func (c *Capability) Input(name string) *InputSpec {
	for i := range c.Inputs {
		if c.Inputs[i].Name == name {
			return &c.Inputs[i]
		}
	}
	return nil
}

// Output returns the output spec with the given name, or nil.
func (c *Capability) Output(name string) *OutputSpec {
	for i := range c.Outputs {
		if c.Outputs[i].Name == name {
			return &c.Outputs[i]
		}
	}
	return nil
}

// Entrypoint says where a run starts.
type Entrypoint struct {
	// URLPattern is the first URL a run opens; "{base_url}" is replaced by the
	// run's base URL.
	URLPattern string `json:"url_pattern"`
}

// ValueType is the type of an input or output.
type ValueType string

// Value types.
const (
	TypeString  ValueType = "string"
	TypeInteger ValueType = "integer"
	TypeNumber  ValueType = "number"
	TypeBoolean ValueType = "boolean"
	TypeMoney   ValueType = "money"
	TypeDate    ValueType = "date"
	TypeEnum    ValueType = "enum"
)

// InputSpec declares one typed caller argument.
type InputSpec struct {
	Name        string    `json:"name"`
	Type        ValueType `json:"type"`
	Description string    `json:"description,omitempty"`
	Required    bool      `json:"required"`
	Sensitive   bool      `json:"sensitive"`
	Pattern     string    `json:"pattern,omitempty"`
	MinLength   *int      `json:"min_length,omitempty"`
	MaxLength   *int      `json:"max_length,omitempty"`
	Minimum     *float64  `json:"minimum,omitempty"`
	Maximum     *float64  `json:"maximum,omitempty"`
	Enum        []string  `json:"enum,omitempty"`
	Default     any       `json:"default,omitempty"`
	Example     any       `json:"example,omitempty"`
	// Transform shapes the caller's value, in order, before it is checked
	// against the rest of the spec and bound: every use of the input (a
	// typed value, a name, a predicate, an identity check) sees the shaped
	// value.
	Transform []InputTransform `json:"transform,omitempty"`
	// ListSpec holds the items and bounds of a list input (type: array;
	// see loop.go).
	ListSpec
}

// OutputSpec declares one typed result.
type OutputSpec struct {
	Name        string    `json:"name"`
	Type        ValueType `json:"type"`
	Description string    `json:"description,omitempty"`
	Sensitive   bool      `json:"sensitive"`
	Required    bool      `json:"required"`
	Pattern     string    `json:"pattern,omitempty"`
	Enum        []string  `json:"enum,omitempty"`
	// Currency (ISO 4217, money outputs only) is the currency the page
	// states once for the value, in a caption or column header: a bare
	// amount ("1,234.56") is then read as this currency, while an amount
	// shown with a different currency still fails.
	Currency string       `json:"currency,omitempty"`
	Source   OutputSource `json:"source"`
}

// OutputSource names the step whose extraction fills an output.
type OutputSource struct {
	Step string `json:"step"`
}

// Prerequisite is another capability run in place, in the same session,
// before the first step when its When predicate holds (for example signing on
// when the sign-on form is showing).
//
// Capability is "id" or "id@version"; ContentHash, when set, pins the
// sealed content hash of the sub-capability that may run (written by seal).
type Prerequisite struct {
	Capability  string     `json:"capability"`
	ContentHash string     `json:"content_hash,omitempty"`
	When        *Predicate `json:"when,omitempty"`
}

// Reentry lets a run on a warm session (a browser context an earlier run
// of the same worker used and left signed on) start at Step instead of
// navigating to the entrypoint, when the screen it shows satisfies When.
// A capability may declare it only when a predicate judged at or after
// Step depends on an input (it checks the identity of its result), so a
// stale screen is never read as the answer; no step before Step may be
// gated, above safe risk or extract an output.
type Reentry struct {
	Step string    `json:"step"`
	When Predicate `json:"when"`
}

// Identity is what a capability declares about proving whose record it
// read. Without it, a capability whose outputs are read from a screen that
// shows a record asked for by an input must check that record's identity:
// a predicate that depends on an input ({input.NAME}) in the checkpoint or
// in the pre- or postcondition or wait of the reading steps (the extract
// steps and the action that brought their screen).
type Identity struct {
	// Unarmed, the reason, declares that the capability reads without such
	// a check (the screen shows nothing that names the record, for
	// example). An approval of the capability records that choice.
	Unarmed string `json:"unarmed"`
}

// ActionType is what a step does.
type ActionType string

// Action types.
const (
	ActClick    ActionType = "click"
	ActType     ActionType = "type"
	ActSelect   ActionType = "select"
	ActPressKey ActionType = "press_key"
	ActNavigate ActionType = "navigate"
	ActExtract  ActionType = "extract"
	ActWaitFor  ActionType = "wait_for"
	ActAssert   ActionType = "assert"
	ActReload   ActionType = "reload"
	// ActFocus moves keyboard focus to the target without clicking it.
	ActFocus ActionType = "focus"
	// ActRawInput is a human's pointer or key input from the console; it is
	// never written in a capability.
	ActRawInput ActionType = "raw_input"
)

// Mutates reports whether the action can change application state.
func (a ActionType) Mutates() bool {
	switch a {
	case ActClick, ActType, ActSelect, ActPressKey, ActRawInput:
		return true
	}
	return false
}

// NeedsTarget reports whether the action acts on a resolved node.
func (a ActionType) NeedsTarget() bool {
	switch a {
	case ActClick, ActType, ActSelect, ActExtract, ActFocus:
		return true
	}
	return false
}

// Transform converts extracted text into a typed value. At most one of its
// forms is set: a named transform (Name: money, date, trim), a regular
// expression with exactly one capture group whose match is the value
// (Regex), or a label prefix to drop (StripPrefix). The zero Transform
// trims surrounding white space. A named transform is written as a plain
// string ("transform: money") and the other forms as one-key objects
// ("transform: {regex: 'Name: (.+)'}").
type Transform struct {
	Name        string
	Regex       string
	StripPrefix string
}

// Named transforms.
const (
	TransformNameMoney = "money"
	TransformNameDate  = "date"
	TransformNameTrim  = "trim"
)

// Transforms of the plain string forms.
var (
	TransformMoney = Transform{Name: TransformNameMoney}
	TransformDate  = Transform{Name: TransformNameDate}
	TransformTrim  = Transform{Name: TransformNameTrim}
)

// IsZero reports whether no transform is set.
func (t Transform) IsZero() bool { return t == Transform{} }

// Kind names the set form: a named transform's name, "regex",
// "strip_prefix", "" when none is set, or "invalid" when several are.
func (t Transform) Kind() string {
	kind, n := "", 0
	if t.Name != "" {
		kind, n = t.Name, n+1
	}
	if t.Regex != "" {
		kind, n = "regex", n+1
	}
	if t.StripPrefix != "" {
		kind, n = "strip_prefix", n+1
	}
	if n > 1 {
		return "invalid"
	}
	return kind
}

// String renders the transform as written.
func (t Transform) String() string {
	switch {
	case t.Regex != "":
		return "{regex: " + t.Regex + "}"
	case t.StripPrefix != "":
		return "{strip_prefix: " + t.StripPrefix + "}"
	}
	return t.Name
}

// Step is one deterministic action.
type Step struct {
	ID          string            `json:"id"`
	Description string            `json:"description,omitempty"`
	Action      ActionType        `json:"action"`
	Target      *TargetDescriptor `json:"target,omitempty"`
	Value       *ValueExpr        `json:"value,omitempty"`
	Key         string            `json:"key,omitempty"`
	URL         string            `json:"url,omitempty"`
	Into        string            `json:"into,omitempty"`
	Transform   Transform         `json:"transform,omitzero"`
	// When makes the step optional: it runs only when When holds on the
	// screen the previous step left; otherwise it is skipped and recorded.
	When          *Predicate `json:"when,omitempty"`
	Precondition  *Predicate `json:"precondition,omitempty"`
	Postcondition *Predicate `json:"postcondition,omitempty"`
	Wait          *Wait      `json:"wait,omitempty"`
	Risk          Risk       `json:"risk"`
	Gate          bool       `json:"gate"`
	// Checkpoint marks the step's postcondition as a durable checkpoint: once
	// it has held, a resumed run does not repeat this step.
	Checkpoint bool `json:"checkpoint"`
	// Effects are what the step must leave in the system of record, read
	// back after it (see effect.go).
	Effects []EffectContract `json:"effects,omitempty"`
	// ForEach makes the step a bounded loop over a list input (see
	// loop.go); such a step sets no action of its own.
	ForEach *ForEach `json:"for_each,omitempty"`
}

// Wait bounds how long a step waits for its postcondition (or, for
// wait_for, for Until).
type Wait struct {
	Until     *Predicate `json:"until,omitempty"`
	TimeoutMS int        `json:"timeout_ms"`
}

// Checkpoint is the state that proves the capability reached its goal.
type Checkpoint struct {
	Description string    `json:"description,omitempty"`
	When        Predicate `json:"when"`
}

// Outcome is a declared business outcome: a legitimate answer, not a failure.
type Outcome struct {
	Code        string            `json:"code"`
	Description string            `json:"description,omitempty"`
	When        Predicate         `json:"when"`
	Returns     map[string]string `json:"returns,omitempty"`
}

// Remedy is what a recovery rule does.
type Remedy string

// Remedies.
const (
	RemedyReload        Remedy = "reload"
	RemedyRunCapability Remedy = "run_capability"
	RemedyWait          Remedy = "wait"
)

// AfterPost says what a reload remedy does when the page came from a POST
// (reloading it would send the form again).
type AfterPost string

// AfterPost choices. The empty value means AfterPostEntrypoint.
const (
	// AfterPostEntrypoint navigates to the capability's entrypoint by GET.
	AfterPostEntrypoint AfterPost = "entrypoint"
	// AfterPostRefuse refuses the reload: the run ends NEEDS_HUMAN.
	AfterPostRefuse AfterPost = "refuse"
)

// RecoveryRule is a declared, bounded response to a recoverable condition.
//
// Capability (run_capability only) is "id" or "id@version"; ContentHash,
// when set, pins the sealed content hash of the remedy (written by seal).
type RecoveryRule struct {
	ID          string    `json:"id"`
	Description string    `json:"description,omitempty"`
	When        Predicate `json:"when"`
	Remedy      Remedy    `json:"remedy"`
	Capability  string    `json:"capability,omitempty"`
	ContentHash string    `json:"content_hash,omitempty"`
	AfterPost   AfterPost `json:"after_post,omitempty"`
	MaxAttempts int       `json:"max_attempts"`
	Backoff     Backoff   `json:"backoff"`
}

// Backoff spaces recovery attempts: attempt n waits InitialMS*Factor^(n-1),
// capped at MaxMS.
type Backoff struct {
	InitialMS int     `json:"initial_ms"`
	Factor    float64 `json:"factor"`
	MaxMS     int     `json:"max_ms"`
}

// Delay returns the wait before attempt n (1-based), in milliseconds.
func (b Backoff) Delay(n int) int {
	d := float64(b.InitialMS)
	for i := 1; i < n; i++ {
		d *= b.Factor
		if b.MaxMS > 0 && d >= float64(b.MaxMS) {
			return b.MaxMS
		}
	}
	if b.MaxMS > 0 && d > float64(b.MaxMS) {
		return b.MaxMS
	}
	return int(d)
}

// Escalation lists the failure codes that hand the run to a human
// (NEEDS_HUMAN) instead of failing it.
type Escalation struct {
	Triggers []FailureCode `json:"triggers,omitempty"`
}

// Escalates reports whether code is listed as a trigger.
func (e Escalation) Escalates(code FailureCode) bool {
	for _, t := range e.Triggers {
		if t == code {
			return true
		}
	}
	return false
}

// CapabilityPolicy bounds what a run of the capability may do.
type CapabilityPolicy struct {
	AllowedDomains []string     `json:"allowed_domains,omitempty"`
	AllowedActions []ActionType `json:"allowed_actions,omitempty"`
	MaxSteps       int          `json:"max_steps"`
	MaxDurationMS  int          `json:"max_duration_ms"`
}

// Provenance records where a capability came from.
type Provenance struct {
	Source      string   `json:"source"`
	Author      string   `json:"author,omitempty"`
	RunID       string   `json:"run_id,omitempty"`
	Model       string   `json:"model,omitempty"`
	CompiledAt  string   `json:"compiled_at,omitempty"`
	Tokens      int      `json:"tokens,omitempty"`
	ReviewNotes []string `json:"review_notes,omitempty"`
}
