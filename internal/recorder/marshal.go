package recorder

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// SchemaModeline is the first line of a written capability: it points
// yaml-language-server at the published schema, relative to
// examples/capabilities/.
const SchemaModeline = "# yaml-language-server: $schema=../../schema/capability.schema.json"

// commentWidth is where review-note comments wrap.
const commentWidth = 78

// Marshal writes c as a YAML capability file: the schema modeline, a header
// naming where c came from, the review notes as comments, then every field
// in the order of the reference capabilities (schema_version, id, version,
// title, description, surface, entrypoint, inputs, outputs, identity, risk,
// prerequisites, steps, reentry, checkpoint, outcomes, recovery, escalation, policy,
// provenance, content_hash). Fields equal to their default (required: true,
// risk: safe, gate: false, name match exact, the default backoff …) are left
// out, so the file hashes exactly as c does.
//
// The output is deterministic: the same capability and notes give the same
// bytes. It loads with capability.Parse and, without content_hash, can be
// sealed with capability.Seal. c is not modified.
func Marshal(c *domain.Capability, notes []string) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("recorder: marshal: no capability")
	}
	root := mapping(false)
	put(root, "schema_version", intNode(c.SchemaVersion))
	put(root, "id", str(c.ID))
	put(root, "version", str(c.Version))
	put(root, "title", str(c.Title))
	putStr(root, "description", c.Description)
	put(root, "surface", str(string(c.Surface)))
	entry := mapping(false)
	put(entry, "url_pattern", quoted(c.Entrypoint.URLPattern))
	put(root, "entrypoint", entry)
	if len(c.Inputs) > 0 {
		s := sequence(false)
		for _, in := range c.Inputs {
			s.Content = append(s.Content, inputNode(in))
		}
		put(root, "inputs", s)
	}
	if len(c.Outputs) > 0 {
		s := sequence(false)
		for _, out := range c.Outputs {
			s.Content = append(s.Content, outputNode(out))
		}
		put(root, "outputs", s)
	}
	if c.Identity != nil {
		put(root, "identity", identityNode(*c.Identity))
	}
	risk := c.Risk
	if risk == "" {
		risk = domain.RiskSafe
	}
	put(root, "risk", str(string(risk)))
	if len(c.Prerequisites) > 0 {
		s := sequence(false)
		for _, p := range c.Prerequisites {
			m := mapping(false)
			put(m, "capability", str(p.Capability))
			if p.ContentHash != "" {
				put(m, "content_hash", str(p.ContentHash))
			}
			if p.When != nil {
				put(m, "when", predicateNode(*p.When))
			}
			s.Content = append(s.Content, m)
		}
		put(root, "prerequisites", s)
	}
	steps := sequence(false)
	for _, st := range c.Steps {
		steps.Content = append(steps.Content, stepNode(st))
	}
	put(root, "steps", steps)
	if re := c.Reentry; re != nil {
		m := mapping(false)
		put(m, "step", str(re.Step))
		put(m, "when", predicateNode(re.When))
		put(root, "reentry", m)
	}
	if cp := c.Checkpoint; cp != nil {
		m := mapping(false)
		putStr(m, "description", cp.Description)
		put(m, "when", predicateNode(cp.When))
		put(root, "checkpoint", m)
	}
	if len(c.Outcomes) > 0 {
		s := sequence(false)
		for _, o := range c.Outcomes {
			s.Content = append(s.Content, outcomeNode(o))
		}
		put(root, "outcomes", s)
	}
	if len(c.Recovery) > 0 {
		s := sequence(false)
		for _, r := range c.Recovery {
			s.Content = append(s.Content, recoveryNode(r))
		}
		put(root, "recovery", s)
	}
	esc := mapping(len(c.Escalation.Triggers) == 0)
	if len(c.Escalation.Triggers) > 0 {
		put(esc, "triggers", strSeq(c.Escalation.Triggers, true))
	}
	put(root, "escalation", esc)
	put(root, "policy", policyNode(c.Policy))
	if p := c.Provenance; p != nil {
		put(root, "provenance", provenanceNode(*p))
	}
	putStr(root, "content_hash", c.ContentHash)

	fixQuoting(root, false)
	root.Content[0].HeadComment = header(c, notes)
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("recorder: marshal %s: %w", c.Ref(), err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("recorder: marshal %s: %w", c.Ref(), err)
	}
	return b.Bytes(), nil
}

// header is the comment block above the first key.
func header(c *domain.Capability, notes []string) string {
	lines := []string{SchemaModeline, "#"}
	var intro string
	if p := c.Provenance; p != nil && (p.Source == "discovery" || p.Source == "demonstration") {
		intro = c.Ref() + ", compiled by the cua recorder from "
		switch {
		case p.Source == "demonstration" && p.RunID != "":
			intro += "human demonstration " + p.RunID
		case p.Source == "demonstration":
			intro += "a human demonstration"
		case p.RunID != "":
			intro += "discovery run " + p.RunID
		default:
			intro += "a discovery run"
		}
		if p.Model != "" {
			intro += " (model " + p.Model + ")"
		}
		if p.CompiledAt != "" {
			intro += " at " + p.CompiledAt
		}
		intro += "."
	} else {
		intro = c.Ref() + ": " + c.Title
	}
	lines = append(lines, wrap(intro, "# ", "# ")...)
	if !c.Sealed() {
		lines = append(lines, "# A draft: review it, then run `cua capability seal FILE`.")
	}
	if len(notes) > 0 {
		lines = append(lines, "#", "# Review notes (also in provenance.review_notes):")
		for _, n := range notes {
			lines = append(lines, wrap(n, "#   - ", "#     ")...)
		}
	}
	return strings.Join(lines, "\n")
}

// wrap breaks text into comment lines of at most commentWidth characters
// (a longer word stays whole), the first with prefix first, the rest with
// prefix rest.
func wrap(text, first, rest string) []string {
	var out []string
	line := first
	empty := true
	for _, w := range strings.Fields(text) {
		w = printable(w)
		if !empty && len(line)+1+len(w) > commentWidth {
			out = append(out, line)
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	return append(out, strings.TrimRight(line, " "))
}

// printable escapes what a YAML comment cannot hold (control and other
// non-printing characters) as \uXXXX.
func printable(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

func inputNode(in domain.InputSpec) *yaml.Node {
	m := mapping(false)
	put(m, "name", str(in.Name))
	put(m, "type", str(string(in.Type)))
	putStr(m, "description", in.Description)
	if !in.Required {
		put(m, "required", boolNode(false))
	}
	if in.Sensitive {
		put(m, "sensitive", boolNode(true))
	}
	if in.Pattern != "" {
		put(m, "pattern", quoted(in.Pattern))
	}
	if in.MinLength != nil {
		put(m, "min_length", intNode(*in.MinLength))
	}
	if in.MaxLength != nil {
		put(m, "max_length", intNode(*in.MaxLength))
	}
	if in.Minimum != nil {
		put(m, "minimum", numberNode(*in.Minimum))
	}
	if in.Maximum != nil {
		put(m, "maximum", numberNode(*in.Maximum))
	}
	if len(in.Enum) > 0 {
		put(m, "enum", strSeq(in.Enum, true))
	}
	putInputExtras(m, in)
	if in.Default != nil {
		put(m, "default", anyNode(in.Default))
	}
	if in.Example != nil {
		put(m, "example", anyNode(in.Example))
	}
	return m
}

func outputNode(out domain.OutputSpec) *yaml.Node {
	m := mapping(false)
	put(m, "name", str(out.Name))
	put(m, "type", str(string(out.Type)))
	putStr(m, "description", out.Description)
	if !out.Required {
		put(m, "required", boolNode(false))
	}
	if out.Sensitive {
		put(m, "sensitive", boolNode(true))
	}
	if out.Pattern != "" {
		put(m, "pattern", quoted(out.Pattern))
	}
	if len(out.Enum) > 0 {
		put(m, "enum", strSeq(out.Enum, true))
	}
	putStr(m, "currency", out.Currency)
	src := mapping(true)
	put(src, "step", str(out.Source.Step))
	put(m, "source", src)
	return m
}

func stepNode(st domain.Step) *yaml.Node {
	m := mapping(false)
	put(m, "id", str(st.ID))
	putStr(m, "description", st.Description)
	if st.ForEach != nil {
		put(m, "for_each", forEachNode(*st.ForEach))
	}
	if st.Action != "" || st.ForEach == nil {
		put(m, "action", str(string(st.Action)))
	}
	if st.Target != nil {
		put(m, "target", targetNode(*st.Target, false))
	}
	if v := st.Value; v != nil {
		put(m, "value", valueNode(*v))
	}
	putStr(m, "key", st.Key)
	if st.URL != "" {
		put(m, "url", quoted(st.URL))
	}
	putStr(m, "into", st.Into)
	switch tr := st.Transform; tr.Kind() {
	case "":
	case "regex":
		n := mapping(true)
		put(n, "regex", quoted(tr.Regex))
		put(m, "transform", n)
	case "strip_prefix":
		n := mapping(true)
		put(n, "strip_prefix", quoted(tr.StripPrefix))
		put(m, "transform", n)
	default:
		put(m, "transform", str(tr.Name))
	}
	if st.Risk != "" && st.Risk != domain.RiskSafe {
		put(m, "risk", str(string(st.Risk)))
	}
	if st.Gate {
		put(m, "gate", boolNode(true))
	}
	if st.Checkpoint {
		put(m, "checkpoint", boolNode(true))
	}
	if st.When != nil {
		put(m, "when", predicateNode(*st.When))
	}
	if st.Precondition != nil {
		put(m, "precondition", predicateNode(*st.Precondition))
	}
	if st.Postcondition != nil {
		put(m, "postcondition", predicateNode(*st.Postcondition))
	}
	if w := st.Wait; w != nil {
		wm := mapping(w.Until == nil)
		if w.Until != nil {
			put(wm, "until", predicateNode(*w.Until))
		}
		if w.TimeoutMS != 0 {
			put(wm, "timeout_ms", intNode(w.TimeoutMS))
		}
		put(m, "wait", wm)
	}
	if len(st.Effects) > 0 {
		put(m, "effects", effectsNode(st.Effects))
	}
	return m
}

// valueNode writes a literal as a plain string and references as
// {$input: NAME}, {$secret: REF}, {$output: NAME}.
func valueNode(v domain.ValueExpr) *yaml.Node {
	key, val := "", ""
	switch v.Kind() {
	case "literal":
		return str(*v.Literal)
	case "input":
		key, val = "$input", v.Input
	case "secret":
		key, val = "$secret", v.Secret
	case "output":
		key, val = "$output", v.Output
	case "item":
		key, val = "$item", v.Item
	default:
		// Not one expression: write every field and let validation say so.
		m := mapping(true)
		putStr(m, "$input", v.Input)
		putStr(m, "$secret", v.Secret)
		putStr(m, "$output", v.Output)
		putStr(m, "$item", v.Item)
		if v.Literal != nil {
			put(m, "literal", str(*v.Literal))
		}
		return m
	}
	m := mapping(true)
	put(m, key, str(val))
	return m
}

// targetNode writes a descriptor: block style in a step, flow style inside
// a predicate.
func targetNode(t domain.TargetDescriptor, flow bool) *yaml.Node {
	m := mapping(flow)
	put(m, "role", str(t.Role))
	if t.Name != nil {
		if t.Name.Input == "" && !t.Name.Affix() && (t.Name.Match == "" || t.Name.Match == domain.MatchExact) {
			put(m, "name", str(t.Name.Value))
		} else {
			n := mapping(true)
			switch {
			case t.Name.Input != "":
				put(n, "$input", str(t.Name.Input))
			case t.Name.Affix():
				putStr(n, "starts_with", t.Name.StartsWith)
				putStr(n, "ends_with", t.Name.EndsWith)
			default:
				put(n, "value", str(t.Name.Value))
			}
			if t.Name.Match != "" && t.Name.Match != domain.MatchExact {
				put(n, "match", str(string(t.Name.Match)))
			}
			put(m, "name", n)
		}
	}
	if a := t.Anchor; a != nil {
		n := mapping(true)
		put(n, "relation", str(string(a.Relation)))
		put(n, "text", str(a.Text))
		put(m, "anchor", n)
	}
	if sc := t.Scope; sc != nil {
		n := mapping(true)
		putStr(n, "frame", sc.Frame)
		putStr(n, "region", sc.Region)
		put(m, "scope", n)
	}
	if t.Ordinal != nil {
		put(m, "ordinal", intNode(*t.Ordinal))
	}
	if h := t.Hints; h != nil {
		n := mapping(true)
		if h.CSS != "" {
			put(n, "css", quoted(h.CSS))
		}
		put(m, "hints", n)
	}
	putStr(m, "recorded_strategy", string(t.RecordedStrategy))
	return m
}

// predicateNode writes a predicate as a block mapping with its one key.
func predicateNode(p domain.Predicate) *yaml.Node {
	m := mapping(false)
	if p.NodeExists != nil {
		put(m, "node_exists", targetNode(*p.NodeExists, true))
	}
	if p.NodeAbsent != nil {
		put(m, "node_absent", targetNode(*p.NodeAbsent, true))
	}
	for _, f := range []struct {
		key string
		t   *domain.TargetDescriptor
	}{{"node_checked", p.NodeChecked}, {"node_unchecked", p.NodeUnchecked}, {"node_selected", p.NodeSelected}} {
		if f.t != nil {
			put(m, f.key, targetNode(*f.t, true))
		}
	}
	if v := p.NodeHasValue; v != nil {
		n := mapping(true)
		put(n, "target", targetNode(v.Target, true))
		if v.Input != "" {
			in := mapping(true)
			put(in, "$input", str(v.Input))
			put(n, "value", in)
		} else {
			put(n, "value", str(v.Value))
		}
		if v.Match != "" && v.Match != domain.MatchExact {
			put(n, "match", str(string(v.Match)))
		}
		put(m, "node_has_value", n)
	}
	if q := p.TextPresent; q != nil {
		put(m, "text_present", textQueryNode(*q))
	}
	if q := p.TextAbsent; q != nil {
		put(m, "text_absent", textQueryNode(*q))
	}
	if p.URLMatches != "" {
		put(m, "url_matches", quoted(p.URLMatches))
	}
	if p.HTTPStatusIn != nil {
		s := sequence(true)
		for _, code := range p.HTTPStatusIn {
			s.Content = append(s.Content, intNode(code))
		}
		put(m, "http_status_in", s)
	}
	for _, list := range []struct {
		key string
		ps  []domain.Predicate
	}{{"all_of", p.AllOf}, {"any_of", p.AnyOf}} {
		if list.ps == nil {
			continue
		}
		s := sequence(false)
		for _, q := range list.ps {
			s.Content = append(s.Content, predicateNode(q))
		}
		put(m, list.key, s)
	}
	if p.Not != nil {
		put(m, "not", predicateNode(*p.Not))
	}
	return m
}

func textQueryNode(q domain.TextQuery) *yaml.Node {
	n := mapping(true)
	put(n, "text", str(q.Text))
	if q.Match != "" && q.Match != domain.MatchContains {
		put(n, "match", str(string(q.Match)))
	}
	putStr(n, "frame", q.Frame)
	return n
}

func outcomeNode(o domain.Outcome) *yaml.Node {
	m := mapping(false)
	put(m, "code", str(o.Code))
	putStr(m, "description", o.Description)
	put(m, "when", predicateNode(o.When))
	if len(o.Returns) > 0 {
		keys := make([]string, 0, len(o.Returns))
		for k := range o.Returns {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		r := mapping(false)
		for _, k := range keys {
			put(r, k, quoted(o.Returns[k]))
		}
		put(m, "returns", r)
	}
	return m
}

func recoveryNode(r domain.RecoveryRule) *yaml.Node {
	m := mapping(false)
	put(m, "id", str(r.ID))
	putStr(m, "description", r.Description)
	put(m, "when", predicateNode(r.When))
	put(m, "remedy", str(string(r.Remedy)))
	putStr(m, "capability", r.Capability)
	if r.ContentHash != "" {
		put(m, "content_hash", str(r.ContentHash))
	}
	putStr(m, "after_post", string(r.AfterPost))
	if r.MaxAttempts != 0 {
		put(m, "max_attempts", intNode(r.MaxAttempts))
	}
	def := domain.Backoff{InitialMS: capability.DefaultBackoffMS, Factor: capability.DefaultBackoffFactor, MaxMS: capability.DefaultBackoffMaxMS}
	if b := r.Backoff; b != (domain.Backoff{}) && b != def {
		n := mapping(true)
		put(n, "initial_ms", intNode(b.InitialMS))
		put(n, "factor", numberNode(b.Factor))
		put(n, "max_ms", intNode(b.MaxMS))
		put(m, "backoff", n)
	}
	return m
}

func policyNode(p domain.CapabilityPolicy) *yaml.Node {
	m := mapping(false)
	if len(p.AllowedDomains) > 0 {
		s := sequence(true)
		for _, d := range p.AllowedDomains {
			s.Content = append(s.Content, quoted(d))
		}
		put(m, "allowed_domains", s)
	}
	if len(p.AllowedActions) > 0 {
		put(m, "allowed_actions", strSeq(p.AllowedActions, true))
	}
	if p.MaxSteps != 0 {
		put(m, "max_steps", intNode(p.MaxSteps))
	}
	if p.MaxDurationMS != 0 {
		put(m, "max_duration_ms", intNode(p.MaxDurationMS))
	}
	if len(m.Content) == 0 {
		m.Style = yaml.FlowStyle
	}
	return m
}

func provenanceNode(p domain.Provenance) *yaml.Node {
	m := mapping(false)
	put(m, "source", str(p.Source))
	putStr(m, "author", p.Author)
	putStr(m, "run_id", p.RunID)
	putStr(m, "model", p.Model)
	putStr(m, "compiled_at", p.CompiledAt)
	if p.Tokens != 0 {
		put(m, "tokens", intNode(p.Tokens))
	}
	if len(p.ReviewNotes) > 0 {
		put(m, "review_notes", strSeq(p.ReviewNotes, false))
	}
	return m
}

// Node builders.

func mapping(flow bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

func sequence(flow bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

func put(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

// putStr puts a string field unless it is empty (empty optional strings are
// not hashed either).
func putStr(m *yaml.Node, key, v string) {
	if v != "" {
		put(m, key, str(v))
	}
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func quoted(s string) *yaml.Node {
	n := str(s)
	n.Style = yaml.DoubleQuotedStyle
	return n
}

func intNode(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i)}
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

// numberNode writes a whole number without a fraction (10000, not 1e+04)
// and any other in the shortest form that reads back exactly.
func numberNode(f float64) *yaml.Node {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatFloat(f, 'f', -1, 64)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(f, 'g', -1, 64)}
}

// anyNode writes a default or example. A string that would read back as
// another type ("00123", "true") is quoted by the encoder.
func anyNode(v any) *yaml.Node {
	switch x := v.(type) {
	case string:
		return str(x)
	case bool:
		return boolNode(x)
	case float64:
		return numberNode(x)
	case float32:
		return numberNode(float64(x))
	case int:
		return intNode(x)
	case int64:
		return numberNode(float64(x))
	}
	return quoted(fmt.Sprint(v))
}

func strSeq[T ~string](items []T, flow bool) *yaml.Node {
	s := sequence(flow)
	for _, it := range items {
		s.Content = append(s.Content, str(string(it)))
	}
	return s
}

// fixQuoting quotes every plain string scalar that YAML would not read
// back as the same string in its context (a colon followed by a
// space, a leading indicator, a flow indicator inside a flow collection, a
// YAML 1.1 boolean, a number …): with double quotes, as the reference files
// do, or with single quotes when the text holds double quotes (left alone,
// the encoder would pick single quotes everywhere). Multi-line strings are left
// to the encoder, which writes a literal block (or double quotes in flow).
func fixQuoting(n *yaml.Node, flow bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!str" && n.Style == 0 && !strings.Contains(n.Value, "\n") && !plainOK(n.Value, flow) {
			// Notes and descriptions quote names: single quotes keep
			// them readable (the encoder falls back to double quotes for
			// text single quotes cannot hold).
			n.Style = yaml.DoubleQuotedStyle
			if strings.Contains(n.Value, `"`) {
				n.Style = yaml.SingleQuotedStyle
			}
		}
	case yaml.MappingNode, yaml.SequenceNode:
		inner := flow || n.Style&yaml.FlowStyle != 0
		for _, c := range n.Content {
			fixQuoting(c, inner)
		}
	}
}

// plainOK reports whether the encoder writes s as a plain scalar in a block
// (flow false) or flow context.
func plainOK(s string, flow bool) bool {
	if s == "" {
		return false
	}
	if flow {
		out, err := yaml.Marshal(struct {
			V []string `yaml:"v,flow"`
		}{[]string{s}})
		return err == nil && string(out) == "v: ["+s+"]\n"
	}
	out, err := yaml.Marshal(s)
	return err == nil && string(out) == s+"\n"
}
