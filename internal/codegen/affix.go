package codegen

import (
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// affixMatcher is the RegExp of a starts_with/ends_with name: a lookahead
// for the start and the end after it, so the two may overlap as they do in
// targeting ("ABA" starts with "AB" and ends with "BA"). Both texts are
// escaped when the test runs, placeholders included. A normalized pair
// (folded, punctuation aside) has no locator.
func (g *gen) affixMatcher(n *domain.NameMatch) string {
	if n.Match != domain.MatchExact && n.Match != "" {
		return g.fail("name: a %s starts_with/ends_with has no locator", n.Match)
	}
	parts := []string{Str("^(?=")}
	if n.StartsWith != "" {
		parts = append(parts, "reEscape("+g.template(n.StartsWith, false)+")")
	}
	parts = append(parts, Str(")[\\s\\S]*"))
	if n.EndsWith != "" {
		parts = append(parts, "reEscape("+g.template(n.EndsWith, false)+")")
	}
	parts = append(parts, Str("$"))
	return "new RegExp(" + strings.Join(parts, " + ") + ")"
}

// picksOwnValue reports whether an extract's transform picks the value out
// of the whole text ({regex} or {strip_prefix}); a regex name then does
// not narrow the text first, as in replay.
func picksOwnValue(t domain.Transform) bool {
	k := t.Kind()
	return k == "regex" || k == "strip_prefix"
}
