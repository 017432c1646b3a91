package capability

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

var (
	placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)
	semverRE      = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
)

// Step fields the per-action rules speak of, by their name in the file.
const (
	fieldTarget        = "target"
	fieldValue         = "value"
	fieldKey           = "key"
	fieldURL           = "url"
	fieldInto          = "into"
	fieldTransform     = "transform"
	fieldWait          = "wait"
	fieldPostcondition = "postcondition"
)

// stepFieldSet reports, per field, whether a step sets it ("wait" counts
// only with a predicate to wait until).
var stepFieldSet = map[string]func(s *domain.Step) bool{
	fieldTarget:        func(s *domain.Step) bool { return s.Target != nil },
	fieldValue:         func(s *domain.Step) bool { return s.Value != nil },
	fieldKey:           func(s *domain.Step) bool { return s.Key != "" },
	fieldURL:           func(s *domain.Step) bool { return s.URL != "" },
	fieldInto:          func(s *domain.Step) bool { return s.Into != "" },
	fieldTransform:     func(s *domain.Step) bool { return !s.Transform.IsZero() },
	fieldWait:          func(s *domain.Step) bool { return s.Wait != nil && s.Wait.Until != nil },
	fieldPostcondition: func(s *domain.Step) bool { return s.Postcondition != nil },
}

// fieldRule says that an action requires (Need) or forbids a step field.
type fieldRule struct {
	Field string
	Need  bool
}

func need(field string) fieldRule   { return fieldRule{Field: field, Need: true} }
func forbid(field string) fieldRule { return fieldRule{Field: field} }

// actionRules is, per action, the step fields it requires ("required for
// action A") and forbids ("not allowed for action A"), checked in this
// order. The fields only one action may set are in [exclusiveFields].
var actionRules = map[domain.ActionType][]fieldRule{
	domain.ActClick:    {need(fieldTarget), forbid(fieldValue)},
	domain.ActType:     {need(fieldTarget), need(fieldValue)},
	domain.ActSelect:   {need(fieldTarget), need(fieldValue)},
	domain.ActPressKey: {need(fieldKey), forbid(fieldValue)},
	domain.ActNavigate: {need(fieldURL), forbid(fieldTarget), forbid(fieldValue)},
	domain.ActExtract:  {need(fieldTarget), need(fieldInto), forbid(fieldValue)},
	domain.ActWaitFor:  {need(fieldWait), forbid(fieldTarget), forbid(fieldValue)},
	domain.ActAssert:   {need(fieldPostcondition), forbid(fieldTarget), forbid(fieldValue)},
	domain.ActReload:   {forbid(fieldTarget), forbid(fieldValue)},
	domain.ActFocus:    {need(fieldTarget), forbid(fieldValue)},
}

// exclusiveFields are the step fields that only one action may set ("not
// allowed for action A" on any other), checked in this order.
var exclusiveFields = []struct {
	Field  string
	Action domain.ActionType
}{
	{fieldKey, domain.ActPressKey},
	{fieldURL, domain.ActNavigate},
	{fieldInto, domain.ActExtract},
	{fieldTransform, domain.ActExtract},
}

// semantic gathers the problems of one capability that the schema cannot
// express. Its checks run in a fixed order, so problems on one line keep
// their order.
type semantic struct {
	d  *document
	c  *domain.Capability
	ps []Problem

	stepIdx, inputIdx, outputIdx map[string]int
	// extracted maps an output name to the step that extracts it, for the
	// steps checked so far.
	extracted map[string]int
	// remap maps a pointer into a loop prototype back to the file (see
	// loopPrototype); nil without loops.
	remap func(string) string
}

// semanticProblems checks what the schema cannot express.
func (d *document) semanticProblems(c *domain.Capability) []Problem {
	orig := c
	c, remap := loopPrototype(c)
	v := &semantic{d: d, c: c, extracted: map[string]int{}, remap: remap}
	v.uniqueNames()
	v.entrypoint()
	for i := range c.Inputs {
		v.input(i)
	}
	maxRisk := domain.RiskSafe
	for i := range c.Steps {
		maxRisk = domain.MaxRisk(maxRisk, c.Steps[i].Risk)
		v.step(i)
	}
	if c.Risk.Rank() < maxRisk.Rank() {
		v.add(pointer("risk"), "capability risk %s is lower than its riskiest step (%s)", c.Risk, maxRisk)
	}
	for i := range c.Outputs {
		v.output(i)
	}
	for i := range c.Recovery {
		v.recovery(i)
	}
	v.prerequisites()
	v.effects()
	v.reentry()
	v.allowedDomains()
	v.templates()
	v.regexes()
	v.loops(orig)
	sort.SliceStable(v.ps, func(i, j int) bool { return v.ps[i].Line < v.ps[j].Line })
	return v.ps
}

func (v *semantic) add(ptr, format string, args ...any) {
	if v.remap != nil {
		ptr = v.remap(ptr)
	}
	v.ps = append(v.ps, v.d.problem(ptr, format, args...))
}

// unique reports every repeated name of a list and returns each name's
// first index.
func (v *semantic) unique(list, field string, names []string) map[string]int {
	seen := map[string]int{}
	for i, n := range names {
		if j, dup := seen[n]; dup {
			v.add(pointer(list, i, field), "duplicate %s %q (first at %s)", field, n, displayPath(pointer(list, j)))
			continue
		}
		seen[n] = i
	}
	return seen
}

func (v *semantic) uniqueNames() {
	c := v.c
	v.stepIdx = v.unique("steps", "id", collect(c.Steps, func(s domain.Step) string { return s.ID }))
	v.inputIdx = v.unique("inputs", "name", collect(c.Inputs, func(s domain.InputSpec) string { return s.Name }))
	v.outputIdx = v.unique("outputs", "name", collect(c.Outputs, func(s domain.OutputSpec) string { return s.Name }))
	v.unique("outcomes", "code", collect(c.Outcomes, func(s domain.Outcome) string { return s.Code }))
	v.unique("recovery", "id", collect(c.Recovery, func(s domain.RecoveryRule) string { return s.ID }))
}

func (v *semantic) regex(ptr, expr string) {
	if _, err := regexp.Compile(expr); err != nil {
		v.add(ptr, "regular expression does not compile: %v", err)
	}
}

func (v *semantic) capabilityRef(ptr, ref string) {
	if _, ver, pinned := strings.Cut(ref, "@"); pinned && !semverRE.MatchString(ver) {
		v.add(ptr, "%q: the version after @ must be an exact semantic version (1.2.0), not a range", ref)
	}
}

func (v *semantic) transform(ptr string, t domain.Transform) {
	switch t.Kind() {
	case domain.TransformNameMoney, domain.TransformNameDate, domain.TransformNameTrim, "strip_prefix":
	case "regex":
		re, err := regexp.Compile(t.Regex)
		if err != nil {
			v.add(ptr+pointer("regex"), "regular expression does not compile: %v", err)
		} else if n := re.NumSubexp(); n != 1 {
			v.add(ptr+pointer("regex"), "needs exactly one capture group (the value), has %d", n)
		}
	default:
		v.add(ptr, "unknown transform %s", t)
	}
}

func (v *semantic) placeholders(ptr, s string) {
	for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
		switch {
		case m[1] == "base_url":
		case strings.HasPrefix(m[1], "input."):
			if _, ok := v.inputIdx[strings.TrimPrefix(m[1], "input.")]; !ok {
				v.add(ptr, "placeholder {%s} names an undeclared input", m[1])
			}
		default:
			v.add(ptr, "unknown placeholder {%s}: use {base_url} or {input.NAME}", m[1])
		}
	}
}

func (v *semantic) entrypoint() {
	ep := v.c.Entrypoint.URLPattern
	if !strings.HasPrefix(ep, "{base_url}") && !strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://") {
		v.add(pointer("entrypoint", "url_pattern"), "must start with {base_url} or an http(s) URL")
	}
	v.placeholders(pointer("entrypoint", "url_pattern"), ep)
}

func (v *semantic) input(i int) {
	in := v.c.Inputs[i]
	p := func(f string) string { return pointer("inputs", i, f) }
	if in.Pattern != "" {
		v.regex(p("pattern"), in.Pattern)
	}
	if in.Type == domain.TypeEnum && len(in.Enum) == 0 {
		v.add(p("enum"), "an enum input needs enum values")
	}
	if in.Type != domain.TypeEnum && len(in.Enum) > 0 {
		v.add(p("enum"), "enum values are only allowed on type enum")
	}
	if in.MinLength != nil && in.MaxLength != nil && *in.MinLength > *in.MaxLength {
		v.add(p("min_length"), "min_length %d exceeds max_length %d", *in.MinLength, *in.MaxLength)
	}
	if in.Minimum != nil && in.Maximum != nil && *in.Minimum > *in.Maximum {
		v.add(p("minimum"), "minimum exceeds maximum")
	}
	if in.Example != nil {
		if _, err := CoerceInput(in, fmt.Sprint(in.Example)); err != nil {
			v.add(p("example"), "example does not satisfy the input: %v", err)
		}
	}
	if in.Default != nil {
		if _, err := CoerceInput(in, fmt.Sprint(in.Default)); err != nil {
			v.add(p("default"), "default does not satisfy the input: %v", err)
		}
	}
}

// step checks steps[i]: its fields against the action's rules, then what
// its fields refer to.
func (v *semantic) step(i int) {
	s := &v.c.Steps[i]
	p := func(f ...any) string { return pointer(append([]any{"steps", i}, f...)...) }
	for _, r := range actionRules[s.Action] {
		switch set := stepFieldSet[r.Field](s); {
		case r.Need && !set:
			v.add(p(r.Field), "required for action %s", s.Action)
		case !r.Need && set:
			v.add(p(r.Field), "not allowed for action %s", s.Action)
		}
	}
	if s.Action != domain.ActWaitFor && stepFieldSet[fieldWait](s) {
		v.add(p("wait", "until"), "only allowed for action wait_for (other steps wait for their postcondition)")
	}
	if s.Checkpoint && s.Postcondition == nil {
		v.add(p("checkpoint"), "a checkpoint step needs a postcondition that proves it happened")
	}
	if allowed := v.c.Policy.AllowedActions; len(allowed) > 0 && !slices.Contains(allowed, s.Action) &&
		s.Action != domain.ActWaitFor && s.Action != domain.ActAssert {
		v.add(p("action"), "action %s is not in policy.allowed_actions", s.Action)
	}
	for _, x := range exclusiveFields {
		if s.Action != x.Action && stepFieldSet[x.Field](s) {
			v.add(p(x.Field), "not allowed for action %s", s.Action)
		}
	}
	if !s.Transform.IsZero() {
		v.transform(p("transform"), s.Transform)
	}
	if s.URL != "" {
		v.placeholders(p("url"), s.URL)
	}
	if s.Value != nil {
		v.stepValue(i, p("value"))
	}
	if s.Action == domain.ActExtract && s.Into != "" {
		v.extract(i, p)
	}
	if s.Action == domain.ActPressKey && s.Key != "" && !ValidKey(s.Key) {
		v.add(p("key"), "unknown key %q", s.Key)
	}
}

// stepValue checks what steps[i].value (at ptr) refers to.
func (v *semantic) stepValue(i int, ptr string) {
	s := &v.c.Steps[i]
	val := s.Value
	switch {
	case val.Input != "":
		if j, ok := v.inputIdx[val.Input]; !ok {
			v.add(ptr+pointer("$input"), "undeclared input %q", val.Input)
		} else if in := v.c.Inputs[j]; !in.Required && in.Default == nil {
			v.add(ptr+pointer("$input"), "input %q is optional and has no default: a run without it would have nothing to type", val.Input)
		}
	case val.Output != "":
		if _, ok := v.extracted[val.Output]; !ok {
			v.add(ptr+pointer("$output"), "output %q is not extracted by an earlier step", val.Output)
		}
	case val.Secret != "":
		if s.Action != domain.ActType {
			v.add(ptr+pointer("$secret"), "a secret can only be typed, not used by %s", s.Action)
		}
	}
}

// extract checks the output that the extract step steps[i] fills.
func (v *semantic) extract(i int, p func(f ...any) string) {
	s := &v.c.Steps[i]
	if oi, ok := v.outputIdx[s.Into]; !ok {
		v.add(p("into"), "undeclared output %q", s.Into)
	} else {
		out := v.c.Outputs[oi]
		if out.Source.Step != s.ID {
			v.add(p("into"), "output %q names step %q as its source", s.Into, out.Source.Step)
		}
		if s.Transform == domain.TransformMoney && out.Type != domain.TypeMoney {
			v.add(p("transform"), "transform money needs an output of type money, %q is %s", s.Into, out.Type)
		}
		if s.Transform == domain.TransformDate && out.Type != domain.TypeDate {
			v.add(p("transform"), "transform date needs an output of type date, %q is %s", s.Into, out.Type)
		}
	}
	if _, dup := v.extracted[s.Into]; dup {
		v.add(p("into"), "output %q is extracted twice", s.Into)
	}
	v.extracted[s.Into] = i
}

func (v *semantic) output(i int) {
	out := v.c.Outputs[i]
	if out.Currency != "" && out.Type != domain.TypeMoney {
		v.add(pointer("outputs", i, "currency"), "currency is only allowed on a money output, %q is %s", out.Name, out.Type)
	}
	p := func(f ...any) string { return pointer(append([]any{"outputs", i}, f...)...) }
	si, ok := v.stepIdx[out.Source.Step]
	switch {
	case !ok:
		v.add(p("source", "step"), "no step %q", out.Source.Step)
	case v.c.Steps[si].Action != domain.ActExtract || v.c.Steps[si].Into != out.Name:
		v.add(p("source", "step"), "step %q does not extract into %q", out.Source.Step, out.Name)
	}
	if out.Pattern != "" {
		v.regex(p("pattern"), out.Pattern)
	}
	if out.Type == domain.TypeEnum && len(out.Enum) == 0 {
		v.add(p("enum"), "an enum output needs enum values")
	}
}

func (v *semantic) recovery(i int) {
	r := v.c.Recovery[i]
	p := func(f string) string { return pointer("recovery", i, f) }
	if r.ContentHash != "" && r.Capability == "" {
		v.add(p("content_hash"), "a pin needs a capability to pin (remedy run_capability)")
	}
	if r.Capability != "" {
		v.capabilityRef(p("capability"), r.Capability)
	}
	if r.AfterPost != "" && r.Remedy != domain.RemedyReload {
		v.add(p("after_post"), "only allowed for remedy reload")
	}
	if r.Remedy == domain.RemedyRunCapability && r.Capability == "" {
		v.add(p("capability"), "required for remedy run_capability")
	}
	if r.Remedy != domain.RemedyRunCapability && r.Capability != "" {
		v.add(p("capability"), "only allowed for remedy run_capability")
	}
	if r.Capability != "" && strings.SplitN(r.Capability, "@", 2)[0] == v.c.ID {
		v.add(p("capability"), "a capability cannot recover by running itself")
	}
	if r.Backoff.MaxMS > 0 && r.Backoff.InitialMS > r.Backoff.MaxMS {
		v.add(p("backoff"), "initial_ms exceeds max_ms")
	}
}

func (v *semantic) prerequisites() {
	for i, pr := range v.c.Prerequisites {
		if strings.SplitN(pr.Capability, "@", 2)[0] == v.c.ID {
			v.add(pointer("prerequisites", i, "capability"), "a capability cannot require itself")
		}
		v.capabilityRef(pointer("prerequisites", i, "capability"), pr.Capability)
	}
}

// reentry checks that starting a warm run at reentry.step can neither
// read a stale screen as the answer nor skip what a run must not skip.
func (v *semantic) reentry() {
	re := v.c.Reentry
	if re == nil {
		return
	}
	at, ok := v.stepIdx[re.Step]
	if !ok {
		v.add(pointer("reentry", "step"), "no step %q", re.Step)
		return
	}
	if !checksIdentityFrom(v.c, at) {
		v.add(pointer("reentry"), "reentry needs an identity check: a predicate that depends on an input "+
			"(a pre- or postcondition or wait of step %q or a later one, or the checkpoint), so a stale screen is never read as the answer", re.Step)
	}
	for i := range at {
		s := &v.c.Steps[i]
		switch {
		case s.Gate:
			v.add(pointer("reentry", "step"), "step %q before %q is gated: a reentered run would skip its review", s.ID, re.Step)
		case s.Risk.Rank() > domain.RiskSafe.Rank():
			v.add(pointer("reentry", "step"), "step %q before %q is %s: a reentered run may skip only safe steps", s.ID, re.Step, s.Risk)
		case s.Action == domain.ActExtract:
			v.add(pointer("reentry", "step"), "step %q before %q extracts output %q, which a reentered run would not read", s.ID, re.Step, s.Into)
		}
	}
}

func (v *semantic) allowedDomains() {
	for i, dom := range v.c.Policy.AllowedDomains {
		if err := CheckAllowedDomain(dom); err != nil {
			v.add(pointer("policy", "allowed_domains", i), "%q: %v", dom, err)
		}
	}
}

// templates checks the inputs that targets and predicates are built from.
func (v *semantic) templates() {
	c := v.c
	visitTemplates(c, func(ptr string, f templateField) {
		for _, name := range templateInputs(f) {
			j, ok := v.inputIdx[name]
			switch {
			case !ok:
				v.add(ptr, "placeholder names undeclared input %q", name)
			case c.Inputs[j].Sensitive:
				v.add(ptr, "input %q is sensitive: a target or check cannot be built from it (it would be shown in messages and records)", name)
			case !c.Inputs[j].Required && c.Inputs[j].Default == nil:
				v.add(ptr, "input %q is optional and has no default: a run without it would have nothing to match", name)
			}
		}
	})
	forEachTarget(c, func(ptr string, t *domain.TargetDescriptor) {
		if n := t.Name; n != nil {
			v.nameForm(ptr+pointer("name"), n)
		}
	})
	forEachPredicate(c, func(ptr string, p *domain.Predicate) {
		if val := p.NodeHasValue; val != nil && val.Input != "" && val.Match == domain.MatchRegex {
			v.add(ptr+pointer("node_has_value", "match"), "a value given as {$input} is matched literally: use exact, normalized or contains")
		}
	})
}

// regexes checks that every regular expression in predicates and targets
// compiles.
func (v *semantic) regexes() {
	forEachPredicate(v.c, func(ptr string, p *domain.Predicate) {
		if p.URLMatches != "" {
			v.regex(ptr+pointer("url_matches"), p.URLMatches)
		}
		for f, q := range map[string]*domain.TextQuery{"text_present": p.TextPresent, "text_absent": p.TextAbsent} {
			if q != nil && q.Match == domain.MatchRegex {
				v.regex(ptr+pointer(f, "text"), q.Text)
			}
		}
		if val := p.NodeHasValue; val != nil && val.Match == domain.MatchRegex {
			v.regex(ptr+pointer("node_has_value", "value"), val.Value)
		}
	})
	forEachTarget(v.c, func(ptr string, t *domain.TargetDescriptor) {
		if t.Name != nil && t.Name.Match == domain.MatchRegex && t.Name.Input == "" {
			v.regex(ptr+pointer("name", "value"), t.Name.Value)
		}
	})
}

func collect[T any](items []T, f func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = f(it)
	}
	return out
}
