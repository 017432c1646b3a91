package toolspec

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// SchemaDraft is the JSON Schema draft of every schema this package writes.
const SchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// Money, dates and integers as replay's output checks read them.
const (
	moneyPattern   = `^-?[0-9]+\.[0-9]{2}$`
	datePattern    = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	integerPattern = `^-?[0-9]+$`
)

// InputSchema is the closed JSON Schema of cp's arguments, one property
// per input: strings (with pattern, length and enum), integers, numbers
// and money as JSON numbers (as an approval's inputs schema reads them),
// booleans, dates as "YYYY-MM-DD" strings; required inputs required,
// additionalProperties false, an example as examples.
//
// approvals are the usable approvals of exactly cp's content: when there is
// one, its bounds narrow the properties (max to maximum, allowed values and
// a one-off approval's exact inputs to enum, a pattern beside the input's
// own, and the property schemas of its inputs schema). With several, each
// call is still checked against them all by catalog.Authorize, and the
// schema carries the capability's own bounds only.
func InputSchema(cp *domain.Capability, approvals []store.Approval) (map[string]any, error) {
	props := map[string]any{}
	required := []string{}
	for _, in := range cp.Inputs {
		props[in.Name] = inputProperty(in)
		if in.Required {
			required = append(required, in.Name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	if len(approvals) == 1 {
		if err := narrow(cp, props, &required, approvals[0]); err != nil {
			return nil, fmt.Errorf("approval %s: %w", approvals[0].ID, err)
		}
		s["required"] = required
	}
	return s, nil
}

func inputProperty(in domain.InputSpec) map[string]any {
	if in.Type == domain.TypeArray {
		return listProperty(in)
	}
	p := map[string]any{}
	switch in.Type {
	case domain.TypeInteger, domain.TypeNumber, domain.TypeMoney:
		p["type"] = string(in.Type)
		if in.Type == domain.TypeMoney {
			p["type"] = "number"
		}
		if in.Minimum != nil {
			p["minimum"] = *in.Minimum
		}
		if in.Maximum != nil {
			p["maximum"] = *in.Maximum
		}
	case domain.TypeBoolean:
		p["type"] = "boolean"
	case domain.TypeDate:
		p["type"], p["format"], p["pattern"] = "string", "date", datePattern
	default:
		p["type"] = "string"
		if in.Pattern != "" {
			p["pattern"] = "^(?:" + in.Pattern + ")$"
		}
		if in.MinLength != nil {
			p["minLength"] = *in.MinLength
		}
		if in.MaxLength != nil {
			p["maxLength"] = *in.MaxLength
		}
	}
	if len(in.Enum) > 0 {
		var vs []any
		for _, e := range in.Enum {
			if v, ok := typedValue(in, e); ok {
				vs = append(vs, v)
			}
		}
		p["enum"] = vs
	}
	desc := in.Description
	if in.Type == domain.TypeMoney {
		desc = joinText(desc, "An amount with at most two decimals.")
	}
	if in.Sensitive {
		desc = joinText(desc, "Sensitive: redacted in every record.")
	}
	if desc != "" {
		p["description"] = desc
	}
	if in.Default != nil {
		if v, ok := typedValue(in, in.Default); ok {
			p["default"] = v
		}
	}
	if in.Example != nil && !in.Sensitive {
		if v, ok := typedValue(in, in.Example); ok {
			p["examples"] = []any{v}
		}
	}
	return p
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// typedValue is v as the schema's JSON type holds it, when it satisfies
// the input spec.
func typedValue(in domain.InputSpec, v any) (any, bool) {
	raw := fmt.Sprint(v)
	if f, ok := v.(float64); ok {
		raw = strconv.FormatFloat(f, 'f', -1, 64)
	}
	got, err := capability.CoerceInput(in, raw)
	if err != nil {
		return nil, false
	}
	if in.Type == domain.TypeMoney {
		return json.Number(got.(string)), true
	}
	return got, true
}

// narrow folds approval a's bounds into props.
func narrow(cp *domain.Capability, props map[string]any, required *[]string, a store.Approval) error {
	prop := func(name string) (map[string]any, domain.InputSpec, error) {
		in := cp.Input(name)
		if in == nil {
			return nil, domain.InputSpec{}, fmt.Errorf("bounds name %q, not an input of %s", name, cp.Ref())
		}
		return props[name].(map[string]any), *in, nil
	}
	for name, max := range a.Bounds.Max {
		p, _, err := prop(name)
		if err != nil {
			return err
		}
		m, ok := new(big.Rat).SetString(max)
		if !ok {
			return fmt.Errorf("max.%s: %q is not a number", name, max)
		}
		if old, ok := p["maximum"].(float64); ok && new(big.Rat).SetFloat64(old).Cmp(m) < 0 {
			continue
		}
		p["maximum"] = json.Number(max)
	}
	enums := map[string][]string{}
	for name, vs := range a.Bounds.Allowed {
		enums[name] = vs
	}
	if a.Once {
		for name, v := range a.Inputs {
			enums[name] = []string{v}
		}
	}
	for name, vs := range enums {
		p, in, err := prop(name)
		if err != nil {
			return err
		}
		allowed := []any{}
		for _, v := range vs {
			tv, ok := typedValue(in, v)
			if ok && (p["enum"] == nil || slices.Contains(p["enum"].([]any), tv)) {
				allowed = append(allowed, tv)
			}
		}
		p["enum"] = allowed
	}
	for name, pat := range a.Bounds.Pattern {
		p, _, err := prop(name)
		if err != nil {
			return err
		}
		addAll(p, map[string]any{"pattern": "^(?:" + pat + ")$"})
	}
	return narrowBySchema(props, required, a.Bounds.InputsSchema)
}

// narrowBySchema folds the property schemas and required names of an
// approval's inputs schema into props; a schema of another shape is left
// to catalog.Authorize, which checks every call against it.
func narrowBySchema(props map[string]any, required *[]string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil
	}
	for name, sub := range s.Properties {
		p, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		var v any
		if err := json.Unmarshal(sub, &v); err != nil {
			return fmt.Errorf("inputs-schema: %s: %w", name, err)
		}
		addAll(p, v)
	}
	for _, name := range s.Required {
		if _, ok := props[name]; ok && !slices.Contains(*required, name) {
			*required = append(*required, name)
		}
	}
	slices.Sort(*required)
	return nil
}

func addAll(p map[string]any, sub any) {
	all, _ := p["allOf"].([]any)
	p["allOf"] = append(all, sub)
}

// OutputSchema is the JSON Schema of a call's structured result
// ([Result]): its status, run id, the typed outputs of a SUCCESS, the
// declared outcome of a BUSINESS_OUTCOME, and the failure code and
// message of a FAILED or NEEDS_HUMAN run.
func OutputSchema(cp *domain.Capability) map[string]any {
	outs := map[string]any{}
	for _, o := range cp.Outputs {
		p := map[string]any{"type": "string"}
		if o.Description != "" {
			p["description"] = o.Description
		}
		if !o.Sensitive { // a sensitive output arrives redacted
			switch o.Type {
			case domain.TypeMoney:
				p["pattern"] = moneyPattern
			case domain.TypeDate:
				p["pattern"], p["format"] = datePattern, "date"
			case domain.TypeInteger:
				p["pattern"] = integerPattern
			}
			if len(o.Enum) > 0 {
				p["enum"] = o.Enum
			}
		}
		outs[o.Name] = p
	}
	outcome := map[string]any{"type": "string", "description": "the declared business outcome"}
	if len(cp.Outcomes) > 0 {
		var codes []string
		for _, o := range cp.Outcomes {
			codes = append(codes, o.Code)
		}
		outcome["enum"] = codes
	}
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"status", "capability"},
		"properties": map[string]any{
			"status": map[string]any{"type": "string", "enum": []string{string(domain.StatusSuccess), string(domain.StatusBusinessOutcome),
				string(domain.StatusNeedsHuman), string(domain.StatusFailed)}},
			"run_id":       str("the run's id: its evidence and index entry"),
			"capability":   str("id@version run"),
			"content_hash": str("the sealed content hash run"),
			"outputs":      map[string]any{"type": "object", "additionalProperties": false, "properties": outs},
			"outcome":      outcome,
			"returns":      map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			"failure_code": str("why a FAILED or NEEDS_HUMAN run stopped"),
			"message":      str("what happened, redacted"),
			"takeover":     str("where a person takes a NEEDS_HUMAN run over"),
		},
	}
}
