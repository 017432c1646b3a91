package recorder

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/targeting"
)

// collectLiterals finds the literals that become inputs before any step is
// compiled, so URL templating knows them wherever they first appear.
func (k *compiler) collectLiterals() {
	k.goalLits = map[string]*domain.TraceStep{}
	for lit := range k.t.Inputs {
		if lit != "" {
			k.goalLits[lit] = nil
		}
	}
	for i := range k.t.Steps {
		ts := &k.t.Steps[i]
		if ts.Verdict != verdictOK || (ts.Action.Type != domain.ActType && ts.Action.Type != domain.ActSelect) {
			continue
		}
		lit, ok := literalOf(ts)
		if !ok || lit == "" {
			continue
		}
		if _, mapped := k.t.Inputs[lit]; mapped || inGoal(k.t.Goal, lit) {
			if k.goalLits[lit] == nil {
				k.goalLits[lit] = ts
			}
		}
	}
	for lit := range k.goalLits {
		k.litOrder = append(k.litOrder, lit)
	}
	slices.SortFunc(k.litOrder, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
}

// literalOf returns the literal a type or select step entered.
func literalOf(ts *domain.TraceStep) (string, bool) {
	v := ts.Action.Value
	switch v.Kind() {
	case "input", "secret", "output":
		return "", false
	case "literal":
		if ts.Literal == "" {
			return *v.Literal, true
		}
	}
	return ts.Literal, true
}

// Trace step verdicts.
const verdictOK = "ok"

// verdictUnverified marks a step no witness confirmed or denied: a silent
// witness never fails an action, so the step is kept, with a review note.
const verdictUnverified = "unverified"

var verdictReasons = map[string]string{
	"skipped": "skipped (its dispatch failed)",
	"denied":  "denied by policy",
}

func (k *compiler) drop(ts *domain.TraceStep, reason string) {
	msg := fmt.Sprintf("trace step %d (%s) dropped: %s", ts.Index, describeTraceStep(ts), reason)
	k.dropped = append(k.dropped, msg)
	k.notes = append(k.notes, msg)
}

// step compiles trace step i, or drops it with a note.
func (k *compiler) step(i int) {
	ts := &k.t.Steps[i]
	if ts.Verdict == verdictUnverified {
		k.notes = append(k.notes, fmt.Sprintf("trace step %d (%s) kept although no witness confirmed its effect: check it does what it should", ts.Index, describeTraceStep(ts)))
	} else if ts.Verdict != verdictOK {
		reason, ok := verdictReasons[ts.Verdict]
		if !ok {
			reason = fmt.Sprintf("unknown verdict %q", ts.Verdict)
		}
		k.drop(ts, reason)
		return
	}
	typ := ts.Action.Type
	if typ == "" && ts.Into != "" {
		typ = domain.ActExtract
	}
	st := domain.Step{Action: typ}
	label := ""
	switch typ {
	case domain.ActNavigate:
		if ts.Action.URL == "" {
			k.drop(ts, "the navigation names no URL")
			return
		}
		st.URL = k.templateURL(ts.Action.URL)
		if !k.entry && len(k.c.Steps) == 0 {
			k.entry = true
			k.c.Entrypoint.URLPattern = st.URL
			return
		}
		label = urlLabel(st.URL)
	case domain.ActClick, domain.ActType, domain.ActSelect, domain.ActExtract, domain.ActPressKey:
		tgt, reason := k.target(ts)
		if tgt == nil && (typ != domain.ActPressKey || reason != "") {
			k.drop(ts, reason)
			return
		}
		st.Target = tgt
		label = targetLabel(tgt)
		if typ == domain.ActPressKey {
			if ts.Action.Key == "" {
				k.drop(ts, "the key press names no key")
				return
			}
			st.Key = ts.Action.Key
			label = ts.Action.Key
		}
		if typ == domain.ActExtract {
			k.extract(ts, &st)
			return
		}
	case domain.ActWaitFor:
		if ts.Postcondition == nil {
			k.drop(ts, "the wait names no condition")
			return
		}
		until, used, what := k.identity(ts.Postcondition)
		if what != "" {
			k.drop(ts, "its condition mentions "+what+", which differs on every run")
			return
		}
		st.Wait = &domain.Wait{Until: until, TimeoutMS: waitMS}
		defer k.noteIdentity("step "+st.ID+": the condition it waits for", used)
	case domain.ActAssert:
		if ts.Postcondition == nil {
			k.drop(ts, "the assertion names no condition")
			return
		}
	case domain.ActReload:
	case domain.ActRawInput:
		k.drop(ts, "raw_input is a console action, not a capability action: demonstrate it again as a semantic action")
		return
	default:
		k.drop(ts, fmt.Sprintf("unknown action %q", typ))
		return
	}
	st.ID = k.stepID(typ, label)
	if typ == domain.ActType || typ == domain.ActSelect {
		if reason := k.value(ts, &st); reason != "" {
			delete(k.ids, st.ID)
			k.drop(ts, reason)
			return
		}
	}
	if ts.Postcondition != nil && typ != domain.ActWaitFor {
		post, used, what := k.identity(ts.Postcondition)
		if what == "" && len(used) > 0 && (typ == domain.ActType || typ == domain.ActSelect) {
			// Typing reads the value back already (dispatch); a check that
			// the field holds the input adds nothing, and the record shown
			// is checked by the steps after.
			what = k.mentionsInput(ts.Postcondition)
		}
		if what != "" {
			if typ == domain.ActAssert {
				delete(k.ids, st.ID)
				k.drop(ts, "its condition mentions "+what+", which differs on every run")
				return
			}
			k.note("step %s: the postcondition the run observed mentions %s, which differs on every run; it was left out", st.ID, what)
		} else {
			st.Postcondition = post
			k.noteIdentity("step "+st.ID+": the postcondition", used)
			if k.loadsPage(i, &st) {
				st.Wait = &domain.Wait{TimeoutMS: waitMS}
			}
		}
	}
	k.risk(ts, &st)
	k.add(ts, st)
}

// add appends a compiled step and notes its target's rung.
func (k *compiler) add(ts *domain.TraceStep, st domain.Step) {
	if len(k.c.Steps) == 0 && !k.entry {
		k.firstURL = ts.URLBefore
	}
	if t := st.Target; t != nil {
		switch {
		case t.RecordedStrategy == "":
			k.note("step %s: the trace records no rung for %s: check that it resolves uniquely", st.ID, describeTarget(t))
		case t.RecordedStrategy.Strength() > domain.StrategySemanticExact.Strength():
			k.note("step %s resolves on %s, weaker than semantic_exact: check that %s stays unique", st.ID, t.RecordedStrategy, describeTarget(t))
		}
		if t.Name != nil && t.Name.Match != domain.MatchRegex {
			lits := make([]string, 0, len(k.litInputs))
			for lit := range k.litInputs {
				lits = append(lits, lit)
			}
			slices.Sort(lits)
			for _, lit := range lits {
				if inGoal(t.Name.Value, lit) {
					k.note("step %s targets a control named after %s: another input will not find it", st.ID, k.literalName(lit))
				}
			}
		}
	}
	k.c.Steps = append(k.c.Steps, st)
	k.from = append(k.from, ts)
}

// target returns the step's descriptor: the one synthesized and re-resolved
// by the discovery run, else the one its action named.
func (k *compiler) target(ts *domain.TraceStep) (*domain.TargetDescriptor, string) {
	switch {
	case ts.Target != nil:
		return ptr(clone(*ts.Target)), ""
	case ts.Action.Target != nil:
		d := ptr(clone(*ts.Action.Target))
		k.note("trace step %d: no synthesized descriptor was recorded; using the one the action named, %s, which was not re-resolved: check it", ts.Index, describeTarget(d))
		return d, ""
	case ts.Node != nil:
		return nil, fmt.Sprintf("no target descriptor was recorded for the %s %q it acted on, and a single node is not a snapshot to synthesize one from: record the step again", ts.Node.Role, ts.Node.Name)
	case ts.Action.Type == domain.ActPressKey:
		return nil, ""
	}
	return nil, "no target was recorded"
}

// value sets a type or select step's value, declaring an input for a goal
// literal. It returns a reason to drop the step, or "".
func (k *compiler) value(ts *domain.TraceStep, st *domain.Step) string {
	v := ts.Action.Value
	sel := st.Action == domain.ActSelect
	switch v.Kind() {
	case "secret":
		if sel {
			return "a secret can only be typed, not selected"
		}
		st.Value = &domain.ValueExpr{Secret: v.Secret}
		return ""
	case "output":
		if !k.outputs[v.Output] {
			return fmt.Sprintf("it enters output %q, which no earlier step extracts", v.Output)
		}
		st.Value = &domain.ValueExpr{Output: v.Output}
		return ""
	case "input":
		st.Value = &domain.ValueExpr{Input: k.namedInput(v.Input, ts, st)}
		return ""
	}
	lit, _ := literalOf(ts)
	sensitive := sensitiveStep(ts, st.Target)
	if _, ok := k.goalLits[lit]; ok && lit != "" || sensitive {
		st.Value = &domain.ValueExpr{Input: k.useInput(lit, ts, st.Target, sel, st.ID)}
		return ""
	}
	st.Value = domain.Lit(lit)
	verb := "types"
	if sel {
		verb = "selects"
	}
	k.note("step %s %s the literal %q, which is not in the goal: every run enters it as is; make it an input if it varies", st.ID, verb, lit)
	return ""
}

// sensitiveStep reports whether a value entered by ts must not be written
// down: the node is a password field or marked sensitive.
func sensitiveStep(ts *domain.TraceStep, t *domain.TargetDescriptor) bool {
	if n := ts.Node; n != nil {
		return n.States.Password || n.Sensitive
	}
	return t != nil && t.Name != nil && strings.Contains(strings.ToLower(t.Name.Value), "password")
}

// useInput declares (once per literal) the input a literal becomes and
// returns its name. ts and t describe where it was entered; both may be nil
// for a literal met first in a URL.
func (k *compiler) useInput(lit string, ts *domain.TraceStep, t *domain.TargetDescriptor, selected bool, stepID string) string {
	if name, ok := k.litInputs[lit]; ok {
		return name
	}
	if ts == nil {
		if first := k.goalLits[lit]; first != nil {
			ts = first
			t = first.Target
			if t == nil {
				t = first.Action.Target
			}
			selected = first.Action.Type == domain.ActSelect
		}
	}
	sensitive := ts != nil && sensitiveStep(ts, t)
	label, mapped := k.t.Inputs[lit]
	if !mapped {
		label = targetLabel(t)
	}
	name := k.inputName(label)
	k.litInputs[lit] = name

	li := inferInput(lit, sensitive, selected)
	spec := li.spec
	spec.Name = name
	where := "a URL"
	if t != nil {
		verb := "Typed into "
		if selected {
			verb = "Selected in "
		}
		where = describeTarget(t)
		spec.Description = verb + where + "."
	}
	if stepID != "" {
		where += " (step " + stepID + ")"
	}
	k.c.Inputs = append(k.c.Inputs, spec)

	from := fmt.Sprintf("the goal literal %q", lit)
	if mapped {
		from = fmt.Sprintf("the literal %q the run mapped to an input", lit)
	}
	switch {
	case spec.Sensitive:
		k.note("input %s (sensitive string, no pattern or example) replaces the value entered in the sensitive field %s: consider a {$secret: REF} instead", name, where)
	case selected:
		k.note("input %s (string) comes from %s selected in %s: consider type enum with the option labels", name, from, where)
	case spec.Type == domain.TypeMoney && li.canonical != "":
		k.note("input %s (money) comes from %s entered in %s: replay enters the canonical amount (%s), check the field accepts it", name, from, where, li.canonical)
	case spec.Type == domain.TypeMoney:
		k.note("input %s (money) comes from %s entered in %s: check the field takes a plain amount", name, from, where)
	case spec.Type == domain.TypeDate:
		k.note("input %s (date, YYYY-MM-DD) comes from %s entered in %s: check the field takes ISO dates", name, from, where)
	case spec.Pattern != "":
		k.note("input %s (string, pattern %s) comes from %s entered in %s: check that the pattern admits every valid value", name, spec.Pattern, from, where)
	default:
		k.note("input %s (string, no pattern) comes from %s entered in %s: add a pattern or length bounds if the field has a format", name, from, where)
	}
	return name
}

// namedInput declares an input the discovery run already referenced by
// name, typing it from the literal the trace maps to it, if any.
func (k *compiler) namedInput(name string, ts *domain.TraceStep, st *domain.Step) string {
	var lits []string
	for lit, n := range k.t.Inputs {
		if n == name {
			lits = append(lits, lit)
		}
	}
	if len(lits) > 0 {
		slices.Sort(lits)
		return k.useInput(lits[0], ts, st.Target, st.Action == domain.ActSelect, st.ID)
	}
	clean := ident(name, "input", maxName)
	for _, in := range k.c.Inputs {
		if in.Name == clean {
			return clean
		}
	}
	clean = k.inputName(name)
	spec := domain.InputSpec{Name: clean, Type: domain.TypeString, Required: true, Sensitive: sensitiveStep(ts, st.Target)}
	if st.Target != nil {
		spec.Description = "Entered in " + describeTarget(st.Target) + "."
	}
	k.c.Inputs = append(k.c.Inputs, spec)
	k.note("input %s is referenced by the discovery run but the trace holds no value for it: typed string without pattern, add its type", clean)
	return clean
}

// inputName returns an unused input name for a label.
func (k *compiler) inputName(label string) string {
	base := ident(label, "input", maxName-4)
	name := base
	for n := 2; k.names[name]; n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	k.names[name] = true
	return name
}

// stepID returns an unused step id made of the action and a label.
func (k *compiler) stepID(a domain.ActionType, label string) string {
	verb := string(a)
	if a == domain.ActPressKey {
		verb = "press"
	}
	base := ident(verb+" "+label, "step", maxName-4)
	id := base
	for n := 2; k.ids[id]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	k.ids[id] = true
	return id
}

// extract compiles an extraction into an extract step and its output.
func (k *compiler) extract(ts *domain.TraceStep, st *domain.Step) {
	t := st.Target
	label := ts.Into
	if label == "" {
		label = targetLabel(t)
	}
	out := ident(label, "output", maxName)
	if k.outputs[out] {
		k.drop(ts, fmt.Sprintf("output %s is already extracted by an earlier step", out))
		return
	}
	if ts.Into != "" && out != ts.Into {
		k.note("output %q is named %s (names are snake_case)", ts.Into, out)
	}
	text := strings.TrimSpace(ts.Extracted)
	if t.Name != nil && text != "" && t.Name.Match != domain.MatchRegex && strings.TrimSpace(t.Name.Value) == text {
		if t.Anchor != nil {
			t.Name = nil
			t.RecordedStrategy = domain.StrategyStructuralAnchor
			k.note("the target of output %s was named by the value it read; the name was dropped so only its anchor %s %q locates it", out, t.Anchor.Relation, t.Anchor.Text)
		} else {
			k.note("the target of output %s is named by the value it read: other records will not match it; give it an anchor", out)
		}
	}
	st.ID = k.stepID(domain.ActExtract, extractLabel(t, out))
	st.Into = out
	typ, tr := inferOutput(text)
	st.Transform = tr
	if ts.Postcondition != nil {
		if post, used, what := k.identity(ts.Postcondition); what != "" {
			k.note("step %s: the postcondition the run observed mentions %s, which differs on every run; it was left out", st.ID, what)
		} else {
			st.Postcondition = post
			k.noteIdentity("step "+st.ID+": the postcondition", used)
		}
	}
	k.risk(ts, st)
	k.outputs[out] = true
	spec := domain.OutputSpec{
		Name:      out,
		Type:      typ,
		Required:  true,
		Sensitive: ts.Node != nil && (ts.Node.Sensitive || ts.Node.States.Password),
		Source:    domain.OutputSource{Step: st.ID},
	}
	k.c.Outputs = append(k.c.Outputs, spec)
	k.add(ts, *st)
	switch {
	case text == "":
		k.note("output %s: the run read no text, so it is typed string: set its type", out)
	case !tr.IsZero():
		k.note("output %s is %s (transform %s), inferred from text shaped %q: check the type", out, typ, tr, textShape(text))
	default:
		k.note("output %s is string, inferred from text shaped %q: check the type, or add a pattern or enum", out, textShape(text))
	}
}

// risk copies the action's risk tier onto the step; an irreversible step is
// gated, and marked a checkpoint when a postcondition proves it happened.
func (k *compiler) risk(ts *domain.TraceStep, st *domain.Step) {
	r := ts.Action.Risk
	switch r {
	case "", domain.RiskSafe:
		return
	case domain.RiskElevated:
		st.Risk = r
		return
	case domain.RiskIrreversible:
	default:
		k.note("step %s: unknown risk tier %q, compiled as irreversible", st.ID, r)
	}
	st.Risk = domain.RiskIrreversible
	st.Gate = true
	if st.Postcondition != nil {
		st.Checkpoint = true
		k.note("step %s is irreversible: it is gated (a run stops before it until a human releases it) and a checkpoint (a resumed run never repeats it once its postcondition held)", st.ID)
	} else {
		k.note("step %s is irreversible: it is gated (a run stops before it until a human releases it); it has no postcondition, so a resumed run cannot tell it already happened: add one", st.ID)
	}
}

// loadsPage reports whether step i loads a document, so its postcondition
// is waited for: a navigation or reload, a click on a link or button, Enter,
// or any step after which the URL changed.
func (k *compiler) loadsPage(i int, st *domain.Step) bool {
	switch st.Action {
	case domain.ActNavigate, domain.ActReload:
		return true
	case domain.ActClick:
		if st.Target != nil {
			switch st.Target.Role {
			case "link", "button", "menuitem", "tab":
				return true
			}
		}
	case domain.ActPressKey:
		if st.Key == "Enter" {
			return true
		}
	}
	before := k.t.Steps[i].URLBefore
	for _, next := range k.t.Steps[i+1:] {
		if next.URLBefore != "" {
			return before != "" && next.URLBefore != before
		}
	}
	return false
}

// mentionsInput describes the first input literal p mentions (in a name,
// anchor, value, text or URL pattern), or returns "". A predicate that
// names one run's input value cannot hold on a run with another.
func (k *compiler) mentionsInput(p *domain.Predicate) string {
	lits := slices.Clone(k.litOrder)
	for lit := range k.litInputs {
		if !slices.Contains(lits, lit) {
			lits = append(lits, lit)
		}
	}
	slices.Sort(lits)
	var texts []string
	target := func(t *domain.TargetDescriptor) {
		if t == nil {
			return
		}
		if t.Name != nil {
			texts = append(texts, t.Name.Value)
		}
		if t.Anchor != nil {
			texts = append(texts, t.Anchor.Text)
		}
	}
	p.Walk(func(q *domain.Predicate) {
		q.NodeTargets(func(_ []string, t *domain.TargetDescriptor) { target(t) })
		if v := q.NodeHasValue; v != nil {
			texts = append(texts, v.Value)
		}
		for _, tq := range []*domain.TextQuery{q.TextPresent, q.TextAbsent} {
			if tq != nil {
				texts = append(texts, tq.Text)
			}
		}
		texts = append(texts, q.URLMatches)
	})
	for _, lit := range lits {
		if lit == "" {
			continue
		}
		for _, s := range texts {
			if inGoal(s, lit) {
				return k.literalName(lit)
			}
		}
	}
	return ""
}

// literalName describes an input literal for a note, without the value of
// a sensitive input.
func (k *compiler) literalName(lit string) string {
	if name, ok := k.litInputs[lit]; ok {
		if in := k.c.Input(name); in != nil && in.Sensitive {
			return "the value of sensitive input " + name
		}
		return fmt.Sprintf("the value of input %s (%q)", name, lit)
	}
	return fmt.Sprintf("the goal literal %q", lit)
}

// generalGoal returns the goal with every whole-token occurrence of a
// declared input's literal replaced by <NAME>, longest literal first.
func (k *compiler) generalGoal() string {
	lits := make([]string, 0, len(k.litInputs))
	for lit := range k.litInputs {
		if lit != "" {
			lits = append(lits, lit)
		}
	}
	slices.SortFunc(lits, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	goal := k.t.Goal
	for _, lit := range lits {
		goal = replaceToken(goal, lit, "<"+k.litInputs[lit]+">")
	}
	return goal
}

// replaceToken replaces the whole-token occurrences of lit in s (see
// [inGoal]) by repl.
func replaceToken(s, lit, repl string) string {
	var b strings.Builder
	for {
		i := tokenIndex(s, lit)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s = s[i+len(lit):]
	}
}

// targetLabel is the text a target is known by: its name, else its anchor
// text, else its role.
func targetLabel(t *domain.TargetDescriptor) string {
	switch {
	case t == nil:
		return ""
	case t.Name != nil && t.Name.Value != "" && t.Name.Match != domain.MatchRegex:
		return t.Name.Value
	case t.Anchor != nil && t.Anchor.Text != "":
		return t.Anchor.Text
	case t.Name != nil:
		return t.Name.Value
	}
	return t.Role
}

// extractLabel names an extract step: the target's name or anchor text,
// else the output.
func extractLabel(t *domain.TargetDescriptor, out string) string {
	if t != nil && (t.Name != nil && t.Name.Match != domain.MatchRegex || t.Anchor != nil) {
		return targetLabel(t)
	}
	return out
}

// describeTarget renders a descriptor for notes, without its CSS hint.
func describeTarget(t *domain.TargetDescriptor) string {
	if t == nil {
		return "no target"
	}
	d := *t
	d.Hints = nil
	return targeting.Describe(d)
}

func describeTraceStep(ts *domain.TraceStep) string {
	a := string(ts.Action.Type)
	if a == "" {
		a = "action"
	}
	switch {
	case ts.Target != nil:
		return a + " " + describeTarget(ts.Target)
	case ts.Action.Target != nil:
		return a + " " + describeTarget(ts.Action.Target)
	case ts.Node != nil:
		return fmt.Sprintf("%s %s %q", a, ts.Node.Role, ts.Node.Name)
	case ts.Action.URL != "":
		return a + " " + ts.Action.URL
	case ts.Action.Key != "":
		return a + " " + ts.Action.Key
	}
	return a
}
