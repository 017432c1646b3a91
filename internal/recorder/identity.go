package recorder

import (
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// identity turns a predicate that mentions the value of an input into an
// identity check: every whole-token occurrence of an input's literal in a
// target name, an anchor text, a node_has_value value or a text query
// becomes {input.NAME} (a node_has_value value that is exactly the literal
// becomes {$input: NAME}: the field holds what was typed), so the check
// proves, on every run, that the screen shows the record asked for.
//
// It returns the rewritten copy and the inputs it uses, or, when p cannot
// be rewritten, why (in mentionsInput's words): the literal is a goal
// literal that is no input, the input is sensitive (its value would be
// written into the capability and shown in messages) or optional without a
// default, or it appears in a regular expression or a URL pattern. A
// predicate that mentions no input comes back as a plain copy.
func (k *compiler) identity(p *domain.Predicate) (*domain.Predicate, []string, string) {
	q := ptr(clone(*p))
	what := k.mentionsInput(p)
	if what == "" {
		return q, nil, ""
	}
	var lits []string
	for lit := range k.litInputs {
		if lit != "" {
			lits = append(lits, lit)
		}
	}
	for _, lit := range k.litOrder {
		if lit != "" && !slices.Contains(lits, lit) {
			lits = append(lits, lit)
		}
	}
	slices.SortFunc(lits, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	var used []string
	bad := ""
	// rewrite templates s in place; regex marks a field that cannot take
	// a placeholder.
	rewrite := func(s *string, regex bool) {
		out, names, lit := k.templateText(*s, lits)
		if lit != "" || len(names) > 0 && regex {
			if bad == "" {
				bad = what
			}
			return
		}
		*s = out
		for _, n := range names {
			if !slices.Contains(used, n) {
				used = append(used, n)
			}
		}
	}
	target := func(t *domain.TargetDescriptor) {
		if t == nil {
			return
		}
		if t.Name != nil && t.Name.Input == "" {
			rewrite(&t.Name.Value, t.Name.Match == domain.MatchRegex)
		}
		if t.Anchor != nil {
			rewrite(&t.Anchor.Text, false)
		}
	}
	q.Walk(func(r *domain.Predicate) {
		r.NodeTargets(func(_ []string, t *domain.TargetDescriptor) { target(t) })
		if v := r.NodeHasValue; v != nil {
			if name, ok := k.litInputs[v.Value]; ok && v.Match != domain.MatchRegex && k.templatable(name) {
				v.Input, v.Value = name, ""
				if !slices.Contains(used, name) {
					used = append(used, name)
				}
			} else {
				rewrite(&v.Value, v.Match == domain.MatchRegex)
			}
		}
		for _, tq := range []*domain.TextQuery{r.TextPresent, r.TextAbsent} {
			if tq != nil {
				rewrite(&tq.Text, tq.Match == domain.MatchRegex)
			}
		}
		if r.URLMatches != "" {
			if _, names, lit := k.templateText(r.URLMatches, lits); lit != "" || len(names) > 0 {
				bad = what
			}
		}
	})
	if bad != "" {
		return nil, nil, bad
	}
	return q, used, ""
}

// templatable reports whether input name may appear in a template: it is
// declared, not sensitive, and required or defaulted.
func (k *compiler) templatable(name string) bool {
	in := k.c.Input(name)
	return in != nil && !in.Sensitive && (in.Required || in.Default != nil)
}

// templateText replaces, left to right, each whole-token occurrence of a
// literal (the longest at a position wins) by {input.NAME}. It returns the
// text, the inputs used, and the first literal it could not template (no
// templatable input behind it), "" when all could be.
func (k *compiler) templateText(s string, lits []string) (string, []string, string) {
	var b strings.Builder
	var names []string
	for {
		at, best := -1, ""
		for _, lit := range lits {
			if i := tokenIndex(s, lit); i >= 0 && (at < 0 || i < at || i == at && len(lit) > len(best)) {
				at, best = i, lit
			}
		}
		if at < 0 {
			b.WriteString(s)
			return b.String(), names, ""
		}
		name, ok := k.litInputs[best]
		if !ok || !k.templatable(name) {
			return "", nil, best
		}
		b.WriteString(s[:at])
		b.WriteString("{input." + name + "}")
		names = append(names, name)
		s = s[at+len(best):]
	}
}
