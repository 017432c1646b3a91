package capability

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// templateRE matches an input placeholder in a target name, an anchor text
// or a predicate's text. Other braces are literal (a regular expression's
// "{5}" stays a quantifier).
var templateRE = regexp.MustCompile(`\{input\.([a-z][a-z0-9_]*)\}`)

// TemplateError is a placeholder BindTemplates could not fill.
type TemplateError struct {
	// Path is the field path ("steps[2].target.name.value").
	Path string
	// Input is the input the placeholder names.
	Input string
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("%s: input %s has no value to bind", e.Path, e.Input)
}

// HasTemplates reports whether any target name, anchor text or predicate
// text of c depends on an input ({input.NAME} or {$input: NAME}).
func HasTemplates(c *domain.Capability) bool {
	found := false
	visitTemplates(c, func(_ string, f templateField) {
		found = found || len(templateInputs(f)) > 0
	})
	return found
}

// ChecksIdentity reports whether any predicate of c (a step's pre- or
// postcondition or wait, the checkpoint, an outcome, a recovery rule, a
// prerequisite's condition) depends on an input: the capability proves that
// the screen shows the record asked for. A warm session may start a run on a
// screen that already shows a result only for such a capability. The
// reentry condition does not count: it says where a run may start, not what
// it found.
func ChecksIdentity(c *domain.Capability) bool {
	found := false
	forEachPredicate(c, func(ptr string, p *domain.Predicate) {
		if strings.HasPrefix(ptr, reentryPtr) {
			return
		}
		found = found || dependsOnInput(ptr, p)
	})
	return found
}

// reentryPtr is the JSON pointer of the reentry block.
var reentryPtr = pointer("reentry")

// checksIdentityFrom reports whether a predicate a run judges once it has
// started at steps[from] depends on an input: a pre- or postcondition or
// wait of that step or a later one, or the checkpoint. Only such a check
// can tell a fresh result from the one a warm session still shows.
func checksIdentityFrom(c *domain.Capability, from int) bool {
	var ps []*domain.Predicate
	for i := max(from, 0); i < len(c.Steps); i++ {
		s := &c.Steps[i]
		ps = append(ps, s.Precondition, s.Postcondition)
		if s.Wait != nil {
			ps = append(ps, s.Wait.Until)
		}
	}
	if c.Checkpoint != nil {
		ps = append(ps, &c.Checkpoint.When)
	}
	return slices.ContainsFunc(ps, requiresInput)
}

// requiresInput reports whether p can hold only on a screen that matches an
// input: p itself depends on one, or one of its all_of members does, or
// every member of its any_of does. A negation never counts (a screen that
// lacks the record asked for may show any other).
func requiresInput(p *domain.Predicate) bool {
	if p == nil {
		return false
	}
	if dependsOnInput("", p) || slices.ContainsFunc(p.AllOf, func(q domain.Predicate) bool { return requiresInput(&q) }) {
		return true
	}
	return len(p.AnyOf) > 0 && !slices.ContainsFunc(p.AnyOf, func(q domain.Predicate) bool { return !requiresInput(&q) })
}

// dependsOnInput reports whether one predicate (not the ones nested in it)
// has a field built from an input.
func dependsOnInput(ptr string, p *domain.Predicate) bool {
	found := false
	predicateFields(ptr, p, func(_ string, f templateField) {
		found = found || len(templateInputs(f)) > 0
	})
	return found
}

// BindTemplates returns a deep copy of c in which every input placeholder
// of a target name (value, $input, starts_with or ends_with), anchor text, node_has_value value
// ({input.NAME} or {$input: NAME}) and text_present/text_absent text is
// replaced by the input's value from inputs (the typed values BindInputs
// returns; each is rendered as it would be typed). In a regex name or text
// the value is quoted (regexp.QuoteMeta), so it matches literally. A name
// or value given as {$input: NAME} becomes a plain value with its match
// mode kept. Entrypoint and navigate URLs are left alone (replay expands
// them, URL-escaped). The copy keeps c's content_hash: it is the sealed
// capability, bound. c is not modified. A placeholder naming an input with
// no value in inputs is a *TemplateError naming the field.
func BindTemplates(c *domain.Capability, inputs map[string]any) (*domain.Capability, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("bind templates: encode capability: %w", err)
	}
	var cp domain.Capability
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("bind templates: copy capability: %w", err)
	}
	var first error
	value := func(ptr, name string) (string, bool) {
		v, ok := inputs[name]
		if !ok || v == nil {
			if first == nil {
				first = &TemplateError{Path: displayPath(ptr), Input: name}
			}
			return "", false
		}
		return fmt.Sprint(v), true
	}
	visitTemplates(&cp, func(ptr string, f templateField) {
		if f.input != nil && *f.input != "" {
			if v, ok := value(ptr, *f.input); ok {
				if f.regex != nil && *f.regex {
					v = regexp.QuoteMeta(v)
				}
				*f.text, *f.input = v, ""
			}
			return
		}
		if f.text == nil || !strings.Contains(*f.text, "{input.") {
			return
		}
		quote := f.regex != nil && *f.regex
		*f.text = templateRE.ReplaceAllStringFunc(*f.text, func(m string) string {
			v, ok := value(ptr, templateRE.FindStringSubmatch(m)[1])
			if !ok {
				return m
			}
			if quote {
				return regexp.QuoteMeta(v)
			}
			return v
		})
	})
	if first != nil {
		return nil, fmt.Errorf("bind templates of %s: %w", c.Ref(), first)
	}
	return &cp, nil
}

// templateField is one field that may hold a placeholder: text (a string
// with {input.NAME}), and for the fields that have an object form, input
// ({$input: NAME}) which replaces text when set. regex points at whether
// the text is a regular expression.
type templateField struct {
	text  *string
	input *string
	regex *bool
}

// visitTemplates calls fn for every template field of c with its JSON
// pointer (of the text, or of $input when that form is used).
func visitTemplates(c *domain.Capability, fn func(ptr string, f templateField)) {
	for i := range c.Steps {
		if t := c.Steps[i].Target; t != nil {
			targetFields(pointer("steps", i, "target"), t, fn)
		}
	}
	forEachPredicate(c, func(ptr string, p *domain.Predicate) { predicateFields(ptr, p, fn) })
}

// targetFields visits a target's name and anchor text.
func targetFields(ptr string, t *domain.TargetDescriptor, fn func(ptr string, f templateField)) {
	if n := t.Name; n != nil {
		re := n.Match == domain.MatchRegex
		p := ptr + pointer("name", "value")
		if n.Input != "" {
			p = ptr + pointer("name", "$input")
		}
		fn(p, templateField{text: &n.Value, input: &n.Input, regex: &re})
		if n.StartsWith != "" {
			fn(ptr+pointer("name", "starts_with"), templateField{text: &n.StartsWith})
		}
		if n.EndsWith != "" {
			fn(ptr+pointer("name", "ends_with"), templateField{text: &n.EndsWith})
		}
	}
	if a := t.Anchor; a != nil {
		fn(ptr+pointer("anchor", "text"), templateField{text: &a.Text})
	}
}

// predicateFields visits the template fields of one predicate (not of the
// predicates nested in it).
func predicateFields(ptr string, p *domain.Predicate, fn func(ptr string, f templateField)) {
	p.NodeTargets(func(path []string, t *domain.TargetDescriptor) {
		targetFields(ptr+pointer(anys(path)...), t, fn)
	})
	if v := p.NodeHasValue; v != nil {
		re := v.Match == domain.MatchRegex
		q := ptr + pointer("node_has_value", "value")
		if v.Input != "" {
			q += pointer("$input")
		}
		fn(q, templateField{text: &v.Value, input: &v.Input, regex: &re})
	}
	for _, tq := range []struct {
		field string
		q     *domain.TextQuery
	}{{"text_present", p.TextPresent}, {"text_absent", p.TextAbsent}} {
		if tq.q != nil {
			re := tq.q.Match == domain.MatchRegex
			fn(ptr+pointer(tq.field, "text"), templateField{text: &tq.q.Text, regex: &re})
		}
	}
}

// templateInputs returns the inputs a template field names.
func templateInputs(f templateField) []string {
	if f.input != nil && *f.input != "" {
		return []string{*f.input}
	}
	if f.text == nil {
		return nil
	}
	var out []string
	for _, m := range templateRE.FindAllStringSubmatch(*f.text, -1) {
		out = append(out, m[1])
	}
	return out
}
