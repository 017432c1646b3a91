package capability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
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
		visit(pointer("steps", i, "precondition"), s.Precondition)
		visit(pointer("steps", i, "postcondition"), s.Postcondition)
		if s.Wait != nil {
			visit(pointer("steps", i, "wait", "until"), s.Wait.Until)
		}
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
		if p.NodeExists != nil {
			fn(ptr+pointer("node_exists"), p.NodeExists)
		}
		if p.NodeAbsent != nil {
			fn(ptr+pointer("node_absent"), p.NodeAbsent)
		}
		if p.NodeHasValue != nil {
			fn(ptr+pointer("node_has_value", "target"), &p.NodeHasValue.Target)
		}
	})
}

var (
	placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)
	semverRE      = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
)

// semanticProblems checks what the schema cannot express.
func (d *document) semanticProblems(c *domain.Capability) []Problem {
	var ps []Problem
	add := func(ptr, format string, args ...any) { ps = append(ps, d.problem(ptr, format, args...)) }

	unique := func(list string, field string, names []string) map[string]int {
		seen := map[string]int{}
		for i, n := range names {
			if j, dup := seen[n]; dup {
				add(pointer(list, i, field), "duplicate %s %q (first at %s)", field, n, displayPath(pointer(list, j)))
				continue
			}
			seen[n] = i
		}
		return seen
	}
	stepIdx := unique("steps", "id", collect(c.Steps, func(s domain.Step) string { return s.ID }))
	inputIdx := unique("inputs", "name", collect(c.Inputs, func(s domain.InputSpec) string { return s.Name }))
	outputIdx := unique("outputs", "name", collect(c.Outputs, func(s domain.OutputSpec) string { return s.Name }))
	unique("outcomes", "code", collect(c.Outcomes, func(s domain.Outcome) string { return s.Code }))
	unique("recovery", "id", collect(c.Recovery, func(s domain.RecoveryRule) string { return s.ID }))

	checkRegex := func(ptr, expr string) {
		if _, err := regexp.Compile(expr); err != nil {
			add(ptr, "regular expression does not compile: %v", err)
		}
	}
	checkCapabilityRef := func(ptr, ref string) {
		if _, ver, pinned := strings.Cut(ref, "@"); pinned && !semverRE.MatchString(ver) {
			add(ptr, "%q: the version after @ must be an exact semantic version (1.2.0), not a range", ref)
		}
	}
	checkTransform := func(ptr string, t domain.Transform) {
		switch t.Kind() {
		case domain.TransformNameMoney, domain.TransformNameDate, domain.TransformNameTrim, "strip_prefix":
		case "regex":
			re, err := regexp.Compile(t.Regex)
			if err != nil {
				add(ptr+pointer("regex"), "regular expression does not compile: %v", err)
			} else if n := re.NumSubexp(); n != 1 {
				add(ptr+pointer("regex"), "needs exactly one capture group (the value), has %d", n)
			}
		default:
			add(ptr, "unknown transform %s", t)
		}
	}
	checkPlaceholders := func(ptr, s string) {
		for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
			switch {
			case m[1] == "base_url":
			case strings.HasPrefix(m[1], "input."):
				if _, ok := inputIdx[strings.TrimPrefix(m[1], "input.")]; !ok {
					add(ptr, "placeholder {%s} names an undeclared input", m[1])
				}
			default:
				add(ptr, "unknown placeholder {%s}: use {base_url} or {input.NAME}", m[1])
			}
		}
	}

	// Entrypoint.
	ep := c.Entrypoint.URLPattern
	if !strings.HasPrefix(ep, "{base_url}") && !strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://") {
		add(pointer("entrypoint", "url_pattern"), "must start with {base_url} or an http(s) URL")
	}
	checkPlaceholders(pointer("entrypoint", "url_pattern"), ep)

	// Inputs.
	for i, in := range c.Inputs {
		p := func(f string) string { return pointer("inputs", i, f) }
		if in.Pattern != "" {
			checkRegex(p("pattern"), in.Pattern)
		}
		if in.Type == domain.TypeEnum && len(in.Enum) == 0 {
			add(p("enum"), "an enum input needs enum values")
		}
		if in.Type != domain.TypeEnum && len(in.Enum) > 0 {
			add(p("enum"), "enum values are only allowed on type enum")
		}
		if in.MinLength != nil && in.MaxLength != nil && *in.MinLength > *in.MaxLength {
			add(p("min_length"), "min_length %d exceeds max_length %d", *in.MinLength, *in.MaxLength)
		}
		if in.Minimum != nil && in.Maximum != nil && *in.Minimum > *in.Maximum {
			add(p("minimum"), "minimum exceeds maximum")
		}
		if in.Example != nil {
			if _, err := CoerceInput(in, fmt.Sprint(in.Example)); err != nil {
				add(p("example"), "example does not satisfy the input: %v", err)
			}
		}
		if in.Default != nil {
			if _, err := CoerceInput(in, fmt.Sprint(in.Default)); err != nil {
				add(p("default"), "default does not satisfy the input: %v", err)
			}
		}
	}

	// Steps.
	extracted := map[string]int{} // output name -> step index that extracts it
	maxRisk := domain.RiskSafe
	for i := range c.Steps {
		s := &c.Steps[i]
		p := func(f ...any) string { return pointer(append([]any{"steps", i}, f...)...) }
		maxRisk = domain.MaxRisk(maxRisk, s.Risk)
		need := func(ok bool, field string) {
			if !ok {
				add(p(field), "required for action %s", s.Action)
			}
		}
		forbid := func(set bool, field string) {
			if set {
				add(p(field), "not allowed for action %s", s.Action)
			}
		}
		switch s.Action {
		case domain.ActClick:
			need(s.Target != nil, "target")
			forbid(s.Value != nil, "value")
		case domain.ActType, domain.ActSelect:
			need(s.Target != nil, "target")
			need(s.Value != nil, "value")
		case domain.ActPressKey:
			need(s.Key != "", "key")
			forbid(s.Value != nil, "value")
		case domain.ActNavigate:
			need(s.URL != "", "url")
			forbid(s.Target != nil, "target")
			forbid(s.Value != nil, "value")
		case domain.ActExtract:
			need(s.Target != nil, "target")
			need(s.Into != "", "into")
			forbid(s.Value != nil, "value")
		case domain.ActWaitFor:
			need(s.Wait != nil && s.Wait.Until != nil, "wait")
			forbid(s.Target != nil, "target")
			forbid(s.Value != nil, "value")
		case domain.ActAssert:
			need(s.Postcondition != nil, "postcondition")
			forbid(s.Target != nil, "target")
			forbid(s.Value != nil, "value")
		case domain.ActReload:
			forbid(s.Target != nil, "target")
			forbid(s.Value != nil, "value")
		case domain.ActFocus:
			need(s.Target != nil, "target")
			forbid(s.Value != nil, "value")
		}
		if s.Action != domain.ActWaitFor && s.Wait != nil && s.Wait.Until != nil {
			add(p("wait", "until"), "only allowed for action wait_for (other steps wait for their postcondition)")
		}
		if s.Checkpoint && s.Postcondition == nil {
			add(p("checkpoint"), "a checkpoint step needs a postcondition that proves it happened")
		}
		if len(c.Policy.AllowedActions) > 0 && !slices.Contains(c.Policy.AllowedActions, s.Action) &&
			s.Action != domain.ActWaitFor && s.Action != domain.ActAssert {
			add(p("action"), "action %s is not in policy.allowed_actions", s.Action)
		}
		if s.Action != domain.ActPressKey {
			forbid(s.Key != "", "key")
		}
		if s.Action != domain.ActNavigate {
			forbid(s.URL != "", "url")
		}
		if s.Action != domain.ActExtract {
			forbid(s.Into != "", "into")
			forbid(!s.Transform.IsZero(), "transform")
		}
		if !s.Transform.IsZero() {
			checkTransform(p("transform"), s.Transform)
		}
		if s.URL != "" {
			checkPlaceholders(p("url"), s.URL)
		}
		if v := s.Value; v != nil {
			switch {
			case v.Input != "":
				if j, ok := inputIdx[v.Input]; !ok {
					add(p("value", "$input"), "undeclared input %q", v.Input)
				} else if in := c.Inputs[j]; !in.Required && in.Default == nil {
					add(p("value", "$input"), "input %q is optional and has no default: a run without it would have nothing to type", v.Input)
				}
			case v.Output != "":
				if _, ok := extracted[v.Output]; !ok {
					add(p("value", "$output"), "output %q is not extracted by an earlier step", v.Output)
				}
			case v.Secret != "":
				if s.Action != domain.ActType {
					add(p("value", "$secret"), "a secret can only be typed, not used by %s", s.Action)
				}
			}
		}
		if s.Action == domain.ActExtract && s.Into != "" {
			oi, ok := outputIdx[s.Into]
			if !ok {
				add(p("into"), "undeclared output %q", s.Into)
			} else {
				out := c.Outputs[oi]
				if out.Source.Step != s.ID {
					add(p("into"), "output %q names step %q as its source", s.Into, out.Source.Step)
				}
				if s.Transform == domain.TransformMoney && out.Type != domain.TypeMoney {
					add(p("transform"), "transform money needs an output of type money, %q is %s", s.Into, out.Type)
				}
				if s.Transform == domain.TransformDate && out.Type != domain.TypeDate {
					add(p("transform"), "transform date needs an output of type date, %q is %s", s.Into, out.Type)
				}
			}
			if _, dup := extracted[s.Into]; dup {
				add(p("into"), "output %q is extracted twice", s.Into)
			}
			extracted[s.Into] = i
		}
		if s.Action == domain.ActPressKey && s.Key != "" && !ValidKey(s.Key) {
			add(p("key"), "unknown key %q", s.Key)
		}
	}
	if c.Risk.Rank() < maxRisk.Rank() {
		add(pointer("risk"), "capability risk %s is lower than its riskiest step (%s)", c.Risk, maxRisk)
	}

	// Outputs.
	for i, out := range c.Outputs {
		if out.Currency != "" && out.Type != domain.TypeMoney {
			add(pointer("outputs", i, "currency"), "currency is only allowed on a money output, %q is %s", out.Name, out.Type)
		}
		p := func(f ...any) string { return pointer(append([]any{"outputs", i}, f...)...) }
		si, ok := stepIdx[out.Source.Step]
		switch {
		case !ok:
			add(p("source", "step"), "no step %q", out.Source.Step)
		case c.Steps[si].Action != domain.ActExtract || c.Steps[si].Into != out.Name:
			add(p("source", "step"), "step %q does not extract into %q", out.Source.Step, out.Name)
		}
		if out.Pattern != "" {
			checkRegex(p("pattern"), out.Pattern)
		}
		if out.Type == domain.TypeEnum && len(out.Enum) == 0 {
			add(p("enum"), "an enum output needs enum values")
		}
	}

	// Recovery.
	for i, r := range c.Recovery {
		p := func(f string) string { return pointer("recovery", i, f) }
		if r.ContentHash != "" && r.Capability == "" {
			add(p("content_hash"), "a pin needs a capability to pin (remedy run_capability)")
		}
		if r.Capability != "" {
			checkCapabilityRef(p("capability"), r.Capability)
		}
		if r.AfterPost != "" && r.Remedy != domain.RemedyReload {
			add(p("after_post"), "only allowed for remedy reload")
		}
		if r.Remedy == domain.RemedyRunCapability && r.Capability == "" {
			add(p("capability"), "required for remedy run_capability")
		}
		if r.Remedy != domain.RemedyRunCapability && r.Capability != "" {
			add(p("capability"), "only allowed for remedy run_capability")
		}
		if r.Capability != "" && strings.SplitN(r.Capability, "@", 2)[0] == c.ID {
			add(p("capability"), "a capability cannot recover by running itself")
		}
		if r.Backoff.MaxMS > 0 && r.Backoff.InitialMS > r.Backoff.MaxMS {
			add(p("backoff"), "initial_ms exceeds max_ms")
		}
	}
	for i, pr := range c.Prerequisites {
		if strings.SplitN(pr.Capability, "@", 2)[0] == c.ID {
			add(pointer("prerequisites", i, "capability"), "a capability cannot require itself")
		}
		checkCapabilityRef(pointer("prerequisites", i, "capability"), pr.Capability)
	}

	// Policy.
	for i, dom := range c.Policy.AllowedDomains {
		if err := CheckAllowedDomain(dom); err != nil {
			add(pointer("policy", "allowed_domains", i), "%q: %v", dom, err)
		}
	}

	// Input templates in targets and predicates.
	visitTemplates(c, func(ptr string, f templateField) {
		for _, name := range templateInputs(f) {
			j, ok := inputIdx[name]
			switch {
			case !ok:
				add(ptr, "placeholder names undeclared input %q", name)
			case c.Inputs[j].Sensitive:
				add(ptr, "input %q is sensitive: a target or check cannot be built from it (it would be shown in messages and records)", name)
			case !c.Inputs[j].Required && c.Inputs[j].Default == nil:
				add(ptr, "input %q is optional and has no default: a run without it would have nothing to match", name)
			}
		}
	})
	forEachTarget(c, func(ptr string, t *domain.TargetDescriptor) {
		if n := t.Name; n != nil && (n.Value == "") == (n.Input == "") {
			add(ptr+pointer("name"), "set exactly one of value and $input")
		}
	})
	forEachPredicate(c, func(ptr string, p *domain.Predicate) {
		if v := p.NodeHasValue; v != nil && v.Input != "" && v.Match == domain.MatchRegex {
			add(ptr+pointer("node_has_value", "match"), "a value given as {$input} is matched literally: use exact, normalized or contains")
		}
	})

	// Predicates and targets.
	forEachPredicate(c, func(ptr string, p *domain.Predicate) {
		if p.URLMatches != "" {
			checkRegex(ptr+pointer("url_matches"), p.URLMatches)
		}
		for f, q := range map[string]*domain.TextQuery{"text_present": p.TextPresent, "text_absent": p.TextAbsent} {
			if q != nil && q.Match == domain.MatchRegex {
				checkRegex(ptr+pointer(f, "text"), q.Text)
			}
		}
		if v := p.NodeHasValue; v != nil && v.Match == domain.MatchRegex {
			checkRegex(ptr+pointer("node_has_value", "value"), v.Value)
		}
	})
	forEachTarget(c, func(ptr string, t *domain.TargetDescriptor) {
		if t.Name != nil && t.Name.Match == domain.MatchRegex && t.Name.Input == "" {
			checkRegex(ptr+pointer("name", "value"), t.Name.Value)
		}
	})
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return ps
}

func collect[T any](items []T, f func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = f(it)
	}
	return out
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
