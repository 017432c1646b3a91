package domain

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Predicate is a condition over an observed screen. Exactly one field is set.
type Predicate struct {
	NodeExists   *TargetDescriptor `json:"node_exists,omitempty"`
	NodeAbsent   *TargetDescriptor `json:"node_absent,omitempty"`
	NodeHasValue *ValueCheck       `json:"node_has_value,omitempty"`
	// NodeChecked, NodeUnchecked and NodeSelected hold when the target
	// resolves to exactly one node whose checked (selected) state is as
	// named: a checkbox, radio, switch or toggle button; an option or tab.
	NodeChecked   *TargetDescriptor `json:"node_checked,omitempty"`
	NodeUnchecked *TargetDescriptor `json:"node_unchecked,omitempty"`
	NodeSelected  *TargetDescriptor `json:"node_selected,omitempty"`
	TextPresent   *TextQuery        `json:"text_present,omitempty"`
	TextAbsent    *TextQuery        `json:"text_absent,omitempty"`
	URLMatches    string            `json:"url_matches,omitempty"`
	HTTPStatusIn  []int             `json:"http_status_in,omitempty"`
	AllOf         []Predicate       `json:"all_of,omitempty"`
	AnyOf         []Predicate       `json:"any_of,omitempty"`
	Not           *Predicate        `json:"not,omitempty"`
}

// PredicateKind names the set field of a predicate, or "" when none or more
// than one is set.
func (p *Predicate) Kind() string {
	if p == nil {
		return ""
	}
	kind, n := "", 0
	set := func(ok bool, k string) {
		if ok {
			kind, n = k, n+1
		}
	}
	set(p.NodeExists != nil, "node_exists")
	set(p.NodeAbsent != nil, "node_absent")
	set(p.NodeHasValue != nil, "node_has_value")
	set(p.NodeChecked != nil, "node_checked")
	set(p.NodeUnchecked != nil, "node_unchecked")
	set(p.NodeSelected != nil, "node_selected")
	set(p.TextPresent != nil, "text_present")
	set(p.TextAbsent != nil, "text_absent")
	set(p.URLMatches != "", "url_matches")
	set(p.HTTPStatusIn != nil, "http_status_in")
	set(p.AllOf != nil, "all_of")
	set(p.AnyOf != nil, "any_of")
	set(p.Not != nil, "not")
	if n != 1 {
		return ""
	}
	return kind
}

// Walk calls fn for p and every predicate nested in it, depth first.
func (p *Predicate) Walk(fn func(*Predicate)) {
	if p == nil {
		return
	}
	fn(p)
	for i := range p.AllOf {
		p.AllOf[i].Walk(fn)
	}
	for i := range p.AnyOf {
		p.AnyOf[i].Walk(fn)
	}
	p.Not.Walk(fn)
}

// NodeTargets calls fn for each target descriptor p itself holds (not
// those of predicates nested in it), with its path below p:
// ["node_exists"], ["node_has_value", "target"].
func (p *Predicate) NodeTargets(fn func(path []string, t *TargetDescriptor)) {
	if p == nil {
		return
	}
	for _, f := range []struct {
		key string
		t   *TargetDescriptor
	}{{"node_exists", p.NodeExists}, {"node_absent", p.NodeAbsent}, {"node_checked", p.NodeChecked},
		{"node_unchecked", p.NodeUnchecked}, {"node_selected", p.NodeSelected}} {
		if f.t != nil {
			fn([]string{f.key}, f.t)
		}
	}
	if p.NodeHasValue != nil {
		fn([]string{"node_has_value", "target"}, &p.NodeHasValue.Target)
	}
}

// ValueCheck asserts the current value of a node. Value may hold
// {input.NAME} placeholders; Input, written `value: {$input: NAME}`, means
// "the field holds what was typed for NAME". Both are bound to the run's
// inputs before evaluation (capability.BindTemplates).
type ValueCheck struct {
	Target TargetDescriptor `json:"target"`
	Value  string           `json:"value"`
	Input  string           `json:"-"`
	Match  MatchMode        `json:"match"`
}

// inputRef is the object form of an input reference.
type inputRef struct {
	Input string `json:"$input"`
}

// MarshalJSON writes an input-bound value as `"value": {"$input": NAME}`
// and a plain one as a string.
func (v ValueCheck) MarshalJSON() ([]byte, error) {
	if v.Input != "" {
		return json.Marshal(struct {
			Target TargetDescriptor `json:"target"`
			Value  inputRef         `json:"value"`
			Match  MatchMode        `json:"match"`
		}{v.Target, inputRef{v.Input}, v.Match})
	}
	type plain ValueCheck
	return json.Marshal(plain(v))
}

// UnmarshalJSON accepts a value written as a string or as {$input: NAME}.
func (v *ValueCheck) UnmarshalJSON(b []byte) error {
	var raw struct {
		Target TargetDescriptor `json:"target"`
		Value  json.RawMessage  `json:"value"`
		Match  MatchMode        `json:"match"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*v = ValueCheck{Target: raw.Target, Match: raw.Match}
	if len(raw.Value) == 0 || string(raw.Value) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw.Value, &v.Value); err == nil {
		return nil
	}
	var ref inputRef
	dec := json.NewDecoder(bytes.NewReader(raw.Value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ref); err != nil || ref.Input == "" {
		return errors.New("node_has_value value must be a string or {$input: NAME}")
	}
	v.Input = ref.Input
	return nil
}

// MarshalJSON writes a named transform as its name and the other forms as
// one-key objects, so a file's spelling survives a round trip (and its
// content hash with it).
func (t Transform) MarshalJSON() ([]byte, error) {
	switch t.Kind() {
	case "regex":
		return json.Marshal(map[string]string{"regex": t.Regex})
	case "strip_prefix":
		return json.Marshal(map[string]string{"strip_prefix": t.StripPrefix})
	case "invalid":
		return nil, errors.New("transform sets more than one form")
	}
	return json.Marshal(t.Name)
}

// UnmarshalJSON accepts "money", "date", "trim", {regex: EXPR} or
// {strip_prefix: TEXT}.
func (t *Transform) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Transform{Name: s}
		return nil
	}
	var obj struct {
		Regex       *string `json:"regex"`
		StripPrefix *string `json:"strip_prefix"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return errors.New("transform must be money, date, trim, {regex: EXPR} or {strip_prefix: TEXT}")
	}
	switch {
	case obj.Regex != nil && obj.StripPrefix == nil && *obj.Regex != "":
		*t = Transform{Regex: *obj.Regex}
	case obj.StripPrefix != nil && obj.Regex == nil && *obj.StripPrefix != "":
		*t = Transform{StripPrefix: *obj.StripPrefix}
	default:
		return errors.New("transform object must set exactly one of regex, strip_prefix, non-empty")
	}
	return nil
}

// TextQuery looks for visible text.
type TextQuery struct {
	Text  string    `json:"text"`
	Match MatchMode `json:"match"`
	// Frame limits the search to one frame (by name or path).
	Frame string `json:"frame,omitempty"`
}

// UnmarshalJSON accepts a plain string as a literal, so capability authors
// may write `value: Enter`.
func (v *ValueExpr) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v.Literal = &s
		return nil
	}
	type plain ValueExpr
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*v = ValueExpr(p)
	if v.Kind() == "" {
		return errors.New("value must set exactly one of $input, $secret, $output, $item, literal")
	}
	return nil
}

// UnmarshalJSON accepts a plain string as an exact name.
func (n *NameMatch) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = NameMatch{Value: s, Match: MatchExact}
		return nil
	}
	type plain NameMatch
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*n = NameMatch(p)
	return nil
}

// UnmarshalJSON accepts a plain string as a text to look for.
func (q *TextQuery) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*q = TextQuery{Text: s}
		return nil
	}
	type plain TextQuery
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*q = TextQuery(p)
	return nil
}
