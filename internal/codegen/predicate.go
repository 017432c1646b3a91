package codegen

import (
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// pred renders a predicate as a boolean expression, evaluated once on the
// page as it is (the caller polls it), inside an async function.
func (g *gen) pred(p *domain.Predicate) string {
	switch p.Kind() {
	case "node_exists":
		return "(await present(" + g.locator(p.NodeExists) + "))"
	case "node_absent":
		return "!(await present(" + g.locator(p.NodeAbsent) + "))"
	case "node_has_value":
		v := p.NodeHasValue
		want := g.template(v.Value, v.Match == domain.MatchRegex)
		if v.Input != "" {
			want = g.inputExpr(v.Input, v.Match == domain.MatchRegex)
		} else if v.Match == domain.MatchRegex && !g.templated(v.Value) {
			src, err := regexSource(v.Value)
			if err != nil {
				return g.fail("node_has_value: %v", err)
			}
			want = Str(src)
		}
		return "(await hasValue(" + g.locator(&v.Target) + ", " + want + ", " + Str(string(v.Match)) + "))"
	case "node_checked":
		return "(await hasState(" + g.locator(p.NodeChecked) + ", 'checked'))"
	case "node_unchecked":
		return "(await hasState(" + g.locator(p.NodeUnchecked) + ", 'unchecked'))"
	case "node_selected":
		return "(await hasState(" + g.locator(p.NodeSelected) + ", 'selected'))"
	case "text_present":
		return "(await present(" + g.text(p.TextPresent) + "))"
	case "text_absent":
		return "!(await present(" + g.text(p.TextAbsent) + "))"
	case "url_matches":
		src, err := regexSource(p.URLMatches)
		if err != nil {
			return g.fail("url_matches: %v", err)
		}
		return "new RegExp(" + Str(src) + ").test(page.url())"
	case "all_of", "any_of":
		list, op := p.AllOf, " && "
		if p.Kind() == "any_of" {
			list, op = p.AnyOf, " || "
		}
		parts := make([]string, len(list))
		for i := range list {
			parts[i] = g.pred(&list[i])
		}
		return "(" + strings.Join(parts, op) + ")"
	case "not":
		return "!" + g.pred(p.Not)
	case "http_status_in":
		return g.fail("http_status_in: a page's HTTP status is not visible to a locator")
	}
	return g.fail("a predicate must set exactly one condition")
}

// text renders a text query as a getByText locator in its frame (the page
// when the query names none).
func (g *gen) text(q *domain.TextQuery) string {
	base := g.scope(q.Frame)
	switch q.Match {
	case domain.MatchExact:
		return base + ".getByText(" + g.template(q.Text, false) + ", { exact: true })"
	case domain.MatchRegex:
		if g.templated(q.Text) {
			return base + ".getByText(new RegExp(" + g.template(q.Text, true) + "))"
		}
		src, err := regexSource(q.Text)
		if err != nil {
			return g.fail("text: %v", err)
		}
		return base + ".getByText(new RegExp(" + Str(src) + "))"
	case domain.MatchNormalized:
		if g.templated(q.Text) {
			return g.fail("text: a %s match of a value from an input has no locator", q.Match)
		}
		f := fold(q.Text)
		if f == "" {
			return g.fail("text %q folds to nothing", q.Text)
		}
		return base + ".getByText(new RegExp(" + Str(foldRegex(f, false)) + ", 'iu'))"
	case domain.MatchContains, "":
		return base + ".getByText(contains(" + g.template(strings.Join(strings.Fields(q.Text), " "), false) + "))"
	}
	return g.fail("text match %q is unknown", q.Match)
}
