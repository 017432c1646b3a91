package domain

import (
	"encoding/json"
	"errors"
)

// Predicate is a condition over an observed screen. Exactly one field is set.
type Predicate struct {
	NodeExists   *TargetDescriptor `json:"node_exists,omitempty"`
	NodeAbsent   *TargetDescriptor `json:"node_absent,omitempty"`
	NodeHasValue *ValueCheck       `json:"node_has_value,omitempty"`
	TextPresent  *TextQuery        `json:"text_present,omitempty"`
	TextAbsent   *TextQuery        `json:"text_absent,omitempty"`
	URLMatches   string            `json:"url_matches,omitempty"`
	HTTPStatusIn []int             `json:"http_status_in,omitempty"`
	AllOf        []Predicate       `json:"all_of,omitempty"`
	AnyOf        []Predicate       `json:"any_of,omitempty"`
	Not          *Predicate        `json:"not,omitempty"`
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

// ValueCheck asserts the current value of a node.
type ValueCheck struct {
	Target TargetDescriptor `json:"target"`
	Value  string           `json:"value"`
	Match  MatchMode        `json:"match"`
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
		return errors.New("value must set exactly one of $input, $secret, $output, literal")
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
