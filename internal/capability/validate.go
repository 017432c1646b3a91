package capability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/schema"
)

var (
	schemaOnce     sync.Once
	compiledSchema *jsonschema.Schema
	schemaErr      error
)

func capabilitySchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.Capability))
		if err != nil {
			schemaErr = fmt.Errorf("parse embedded capability schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(schema.CapabilityID, doc); err != nil {
			schemaErr = fmt.Errorf("add capability schema: %w", err)
			return
		}
		compiledSchema, schemaErr = c.Compile(schema.CapabilityID)
	})
	return compiledSchema, schemaErr
}

// schemaProblems validates the generic tree against the published schema.
func (d *document) schemaProblems() ([]Problem, error) {
	sch, err := capabilitySchema()
	if err != nil {
		return nil, err
	}
	err = sch.Validate(d.tree)
	if err == nil {
		return nil, nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil, fmt.Errorf("validate: %w", err)
	}
	var out []Problem
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		for _, p := range d.leafProblems(e) {
			key := p.Path + "\x00" + p.Message
			if !seen[key] {
				seen[key] = true
				out = append(out, p)
			}
		}
	}
	walk(verr)
	return out, nil
}

func (d *document) leafProblems(e *jsonschema.ValidationError) []Problem {
	ptr := pointer(anySlice(e.InstanceLocation)...)
	if len(e.InstanceLocation) == 0 {
		ptr = ""
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var ps []Problem
		for _, m := range k.Missing {
			ps = append(ps, d.problem(ptr+pointer(m), "required field is missing"))
		}
		return ps
	case *kind.AdditionalProperties:
		var ps []Problem
		for _, m := range k.Properties {
			ps = append(ps, d.problem(ptr+pointer(m), "unknown field"))
		}
		return ps
	case *kind.MaxProperties:
		return []Problem{d.problem(ptr, "set exactly one of its fields (got %d)", k.Got)}
	case *kind.MinProperties:
		return []Problem{d.problem(ptr, "set exactly one of its fields (got none)")}
	}
	return []Problem{d.problem(ptr, "%s", e.ErrorKind.LocalizedString(printer))}
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// applyTreeDefaults sets defaults that must be known before decoding
// because their zero value means something else (required: true).
func (d *document) applyTreeDefaults() {
	root, ok := d.tree.(map[string]any)
	if !ok {
		return
	}
	for _, list := range []string{"inputs", "outputs"} {
		items, _ := root[list].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				if _, set := m["required"]; !set {
					m["required"] = true
				}
			}
		}
	}
}

// decode turns the validated tree into a Capability.
func (d *document) decode() (*domain.Capability, error) {
	raw, err := appendTreeJSON(make([]byte, 0, 1<<12), d.tree)
	if err != nil {
		return nil, fmt.Errorf("encode tree: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c domain.Capability
	if err := dec.Decode(&c); err != nil {
		return nil, &InvalidError{File: d.file, Problems: []Problem{{File: d.file, Line: 1, Message: "decode: " + err.Error()}}}
	}
	return &c, nil
}

// appendTreeJSON appends the JSON text of a tree that convert built. It is
// encoding/json's Marshal without the sorting of map keys (decoding into a
// struct does not need it, and a 200,000-key object made it a third of
// validation) and without reflection. Strings are valid UTF-8 (YAML
// requires it) and numbers finite (scalar refuses the others).
func appendTreeJSON(b []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return appendCanonicalString(b, v), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float64:
		n, err := CanonicalNumber(v)
		return append(b, n...), err
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendTreeJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		b = append(b, '{')
		first := true
		for k, e := range v {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendCanonicalString(b, k)
			b = append(b, ':')
			if b, err = appendTreeJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("unexpected %T in the document tree", v)
}

// Defaults used when a field is absent.
const (
	DefaultMaxSteps      = 100
	DefaultMaxDurationMS = 120000
	DefaultWaitMS        = 10000
	DefaultMaxAttempts   = 3
	DefaultBackoffMS     = 200
	DefaultBackoffFactor = 2
	DefaultBackoffMaxMS  = 5000
)

// ApplyDefaults fills every absent field that has a default, so the content
// hash covers the behaviour, not the spelling. It is idempotent.
func ApplyDefaults(c *domain.Capability) {
	if c.Risk == "" {
		c.Risk = domain.RiskSafe
	}
	if c.Policy.MaxSteps == 0 {
		c.Policy.MaxSteps = DefaultMaxSteps
	}
	if c.Policy.MaxDurationMS == 0 {
		c.Policy.MaxDurationMS = DefaultMaxDurationMS
	}
	for i := range c.Steps {
		s := &c.Steps[i]
		if s.Risk == "" {
			s.Risk = domain.RiskSafe
		}
		if s.Wait != nil && s.Wait.TimeoutMS == 0 {
			s.Wait.TimeoutMS = DefaultWaitMS
		}
	}
	for i := range c.Recovery {
		r := &c.Recovery[i]
		if r.MaxAttempts == 0 {
			r.MaxAttempts = DefaultMaxAttempts
		}
		if r.Backoff == (domain.Backoff{}) {
			r.Backoff = domain.Backoff{InitialMS: DefaultBackoffMS, Factor: DefaultBackoffFactor, MaxMS: DefaultBackoffMaxMS}
		}
		if r.Backoff.Factor == 0 {
			r.Backoff.Factor = 1
		}
	}
	forEachTarget(c, func(_ string, t *domain.TargetDescriptor) {
		if t.Name != nil && t.Name.Match == "" {
			t.Name.Match = domain.MatchExact
		}
	})
	forEachPredicate(c, func(_ string, p *domain.Predicate) {
		for _, q := range []*domain.TextQuery{p.TextPresent, p.TextAbsent} {
			if q != nil && q.Match == "" {
				q.Match = domain.MatchContains
			}
		}
		if p.NodeHasValue != nil && p.NodeHasValue.Match == "" {
			p.NodeHasValue.Match = domain.MatchExact
		}
	})
	applyLoopDefaults(c)
}

// forEachPredicate visits every predicate with its JSON pointer.
func forEachPredicate(c *domain.Capability, fn func(ptr string, p *domain.Predicate)) {
	var visit func(ptr string, p *domain.Predicate)
	visit = func(ptr string, p *domain.Predicate) {
		if p == nil {
			return
		}
		fn(ptr, p)
		for i := range p.AllOf {
			visit(ptr+pointer("all_of", i), &p.AllOf[i])
		}
		for i := range p.AnyOf {
			visit(ptr+pointer("any_of", i), &p.AnyOf[i])
		}
		visit(ptr+pointer("not"), p.Not)
	}
	for i := range c.Prerequisites {
		visit(pointer("prerequisites", i, "when"), c.Prerequisites[i].When)
	}
	for i := range c.Steps {
		s := &c.Steps[i]
		visit(pointer("steps", i, "when"), s.When)
		visit(pointer("steps", i, "precondition"), s.Precondition)
		visit(pointer("steps", i, "postcondition"), s.Postcondition)
		if s.Wait != nil {
			visit(pointer("steps", i, "wait", "until"), s.Wait.Until)
		}
	}
	if c.Reentry != nil {
		visit(pointer("reentry", "when"), &c.Reentry.When)
	}
	if c.Checkpoint != nil {
		visit(pointer("checkpoint", "when"), &c.Checkpoint.When)
	}
	for i := range c.Outcomes {
		visit(pointer("outcomes", i, "when"), &c.Outcomes[i].When)
	}
	for i := range c.Recovery {
		visit(pointer("recovery", i, "when"), &c.Recovery[i].When)
	}
}

// forEachTarget visits every target descriptor, in steps and predicates.
func forEachTarget(c *domain.Capability, fn func(ptr string, t *domain.TargetDescriptor)) {
	for i := range c.Steps {
		if c.Steps[i].Target != nil {
			fn(pointer("steps", i, "target"), c.Steps[i].Target)
		}
	}
	forEachPredicate(c, func(ptr string, p *domain.Predicate) {
		p.NodeTargets(func(path []string, t *domain.TargetDescriptor) {
			fn(ptr+pointer(anys(path)...), t)
		})
	})
}

// keys a press_key step may name (besides single printable characters).
var namedKeys = map[string]bool{
	"Enter": true, "Tab": true, "Escape": true, "Backspace": true, "Delete": true, "Space": true,
	"ArrowUp": true, "ArrowDown": true, "ArrowLeft": true, "ArrowRight": true,
	"Home": true, "End": true, "PageUp": true, "PageDown": true,
}

// ValidKey reports whether key is a key cua can press: a named key, or one
// printable character other than space (control characters such as "\r"
// would be Enter under another name, out of the policy's sight: write
// "Enter" and "Space").
func ValidKey(key string) bool {
	if namedKeys[key] {
		return true
	}
	r := []rune(key)
	return len(r) == 1 && unicode.IsPrint(r[0]) && !unicode.IsSpace(r[0])
}

var printer = message.NewPrinter(language.English)
