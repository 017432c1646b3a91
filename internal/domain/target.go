package domain

// MatchMode says how an accessible name is compared.
type MatchMode string

// Match modes.
const (
	MatchExact      MatchMode = "exact"
	MatchNormalized MatchMode = "normalized"
	MatchContains   MatchMode = "contains"
	MatchRegex      MatchMode = "regex"
)

// NameMatch is an accessible-name constraint. Exactly one of Value, Input
// and the StartsWith/EndsWith pair is set. Value may hold {input.NAME} placeholders; Input
// (`name: {$input: label}`) takes the whole name from an input. Both are
// bound to the run's inputs (capability.BindTemplates) before targeting
// sees the descriptor.
//
// StartsWith and EndsWith (either or both, instead of Value and Input)
// require the name to start with one text and end with the other; the two
// may overlap, so {starts_with: AB, ends_with: BA} matches "ABA" (see
// affix.go). They may hold placeholders too.
type NameMatch struct {
	Value      string    `json:"value,omitempty"`
	Input      string    `json:"$input,omitempty"`
	StartsWith string    `json:"starts_with,omitempty"`
	EndsWith   string    `json:"ends_with,omitempty"`
	Match      MatchMode `json:"match"`
}

// Scope narrows where a target is looked for.
type Scope struct {
	// Frame is the frame's name (or its path of names, "outer/inner").
	Frame string `json:"frame,omitempty"`
	// Region is the nearest heading or landmark name the node sits under.
	Region string `json:"region,omitempty"`
}

// AnchorRelation relates a target to nearby label text.
type AnchorRelation string

// Anchor relations.
const (
	RelRowOf         AnchorRelation = "row_of"
	RelAdjacentTo    AnchorRelation = "adjacent_to"
	RelWithinSection AnchorRelation = "within_section"
	RelLabelledBy    AnchorRelation = "labelled_by"
)

// Anchor locates a target by its relation to visible text. Text may hold
// {input.NAME} placeholders.
type Anchor struct {
	Relation AnchorRelation `json:"relation"`
	Text     string         `json:"text"`
}

// Hints are cached, non-semantic shortcuts. A hint is accepted only when the
// node it finds also satisfies the descriptor's role and name.
type Hints struct {
	CSS string `json:"css,omitempty"`
}

// Strategy is a rung of the resolution ladder, strongest first.
type Strategy string

// Ladder rungs.
const (
	StrategySemanticExact      Strategy = "semantic_exact"
	StrategySemanticNormalized Strategy = "semantic_normalized"
	StrategyStructuralAnchor   Strategy = "structural_anchor"
	StrategyHintCached         Strategy = "hint_cached"
	StrategyOrdinalInRegion    Strategy = "ordinal_in_region"
)

// Strength returns the rung's position (0 strongest); unknown is weakest.
func (s Strategy) Strength() int {
	switch s {
	case StrategySemanticExact:
		return 0
	case StrategySemanticNormalized:
		return 1
	case StrategyStructuralAnchor:
		return 2
	case StrategyHintCached:
		return 3
	case StrategyOrdinalInRegion:
		return 4
	}
	return 5
}

// TargetDescriptor identifies a control semantically: role, accessible name,
// scope, anchor and ordinal (DESIGN invariant 3). It never is a bare CSS
// selector.
type TargetDescriptor struct {
	Role             string     `json:"role"`
	Name             *NameMatch `json:"name,omitempty"`
	Scope            *Scope     `json:"scope,omitempty"`
	Anchor           *Anchor    `json:"anchor,omitempty"`
	Ordinal          *int       `json:"ordinal,omitempty"`
	Hints            *Hints     `json:"hints,omitempty"`
	RecordedStrategy Strategy   `json:"recorded_strategy,omitempty"`
}

// ValueExpr is the value a step types, selects or presses: exactly one of an
// input reference, a secret reference, an earlier output, or a literal.
type ValueExpr struct {
	Input   string  `json:"$input,omitempty"`
	Secret  string  `json:"$secret,omitempty"`
	Output  string  `json:"$output,omitempty"`
	Literal *string `json:"literal,omitempty"`
	// Item (inside a for_each loop) is the element of the iteration: the
	// loop's as name ("item") or one field of it ("item.qty").
	Item string `json:"$item,omitempty"`
}

// Lit returns a literal ValueExpr.
func Lit(s string) *ValueExpr { return &ValueExpr{Literal: &s} }

// Kind names which field is set: "input", "secret", "output", "literal" or
// "" when none or more than one is.
func (v *ValueExpr) Kind() string {
	if v == nil {
		return ""
	}
	kind, n := "", 0
	if v.Input != "" {
		kind, n = "input", n+1
	}
	if v.Secret != "" {
		kind, n = "secret", n+1
	}
	if v.Output != "" {
		kind, n = "output", n+1
	}
	if v.Literal != nil {
		kind, n = "literal", n+1
	}
	if v.Item != "" {
		kind, n = "item", n+1
	}
	if n != 1 {
		return ""
	}
	return kind
}

// IsSecret reports whether the value is a secret reference.
func (v *ValueExpr) IsSecret() bool { return v != nil && v.Secret != "" }

// String describes the expression without revealing any value but a literal.
func (v *ValueExpr) String() string {
	switch v.Kind() {
	case "input":
		return "{$input: " + v.Input + "}"
	case "secret":
		return "{$secret: " + v.Secret + "}"
	case "output":
		return "{$output: " + v.Output + "}"
	case "literal":
		return *v.Literal
	case "item":
		return "{$item: " + v.Item + "}"
	}
	return "<invalid value>"
}
