package codegen

import (
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// scope returns the variable of the document a frame path names ("" is
// the page), declaring a frame variable on first use.
func (g *gen) scope(path string) string {
	if path == "" {
		return "page"
	}
	if v, ok := g.frames[path]; ok {
		return v
	}
	parent := "page"
	name := path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		parent, name = g.scope(path[:i]), path[i+1:]
	}
	title, ok := g.opts.FrameTitles[path]
	if !ok {
		title, ok = g.opts.FrameTitles[name]
	}
	decl := fmt.Sprintf("frame(%s, %s)", parent, Str(title))
	if !ok || title == "" {
		// No title given: the frame is found by the name the scope uses,
		// which only a page or another frame found by name can look up.
		if parent != "page" && !g.named[parent] {
			return g.fail("frame %q is inside a frame found by its title; give it a title too (--frame-title %s=TITLE)", path, name)
		}
		decl = fmt.Sprintf("frameNamed(%s, %s)", parent, Str(name))
	}
	v := frameVar(name, len(g.fnames), g.frames)
	g.frames[path] = v
	g.fnames = append(g.fnames, path)
	if strings.HasPrefix(decl, "frameNamed(") {
		g.named[v] = true
	}
	g.fdecl = append(g.fdecl, fmt.Sprintf("const %s = %s;", v, decl))
	return v
}

// frameVar names a frame's variable after the frame when the name is a
// plain lowercase word, else by its number.
func frameVar(name string, n int, used map[string]string) string {
	v := fmt.Sprintf("frame%d", n+1)
	ok := name != "" && len(name) <= 24
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			ok = false
		}
	}
	if ok {
		v = name + "Frame"
	}
	for _, u := range used {
		if u == v {
			return fmt.Sprintf("frame%d", n+1)
		}
	}
	return v
}

// locator renders a target descriptor as a Playwright locator expression:
// role and name, then anchor, then ordinal. The descriptor's CSS hint is
// never used.
func (g *gen) locator(d *domain.TargetDescriptor) string {
	if d == nil {
		return g.fail("the step has no target")
	}
	sc := ""
	if d.Scope != nil {
		if d.Scope.Region != "" {
			return g.fail("scope region %q: a region under a heading has no role locator", d.Scope.Region)
		}
		sc = d.Scope.Frame
	}
	base := g.scope(sc)
	role := domain.CanonicalRole(d.Role)
	if d.Anchor != nil {
		switch d.Anchor.Relation {
		case domain.RelRowOf:
			label := g.template(d.Anchor.Text, false)
			row := "rowOf(" + base + ", " + label + ")"
			loc := g.byRole(row, role, d.Name)
			return g.ordinal(loc+".filter({ hasNotText: exactly("+label+") })", d)
		case domain.RelLabelledBy:
			label := g.template(d.Anchor.Text, false)
			loc := g.byRole(base, role, d.Name)
			return g.ordinal(loc+".and("+base+".getByLabel("+label+", { exact: true }))", d)
		default:
			return g.fail("anchor %s: no role or label locator expresses it", d.Anchor.Relation)
		}
	}
	return g.ordinal(g.byRole(base, role, d.Name), d)
}

func (g *gen) ordinal(loc string, d *domain.TargetDescriptor) string {
	if d.Ordinal == nil {
		return loc
	}
	if *d.Ordinal < 1 {
		return g.fail("ordinal %d (ordinals start at 1)", *d.Ordinal)
	}
	return fmt.Sprintf("%s.nth(%d)", loc, *d.Ordinal-1)
}

// byRole is base.getByRole(role, name) for each ARIA role the canonical
// role maps to, joined with .or(); the text role is getByText.
func (g *gen) byRole(base, role string, name *domain.NameMatch) string {
	if role == domain.RoleText {
		if name == nil {
			return g.fail("role text needs a name to find the text by")
		}
		return base + ".getByText(" + g.textMatcher(name) + ")"
	}
	aria, ok := PlaywrightRoles[role]
	if !ok {
		return g.fail("role %q has no ARIA role Playwright's getByRole accepts", role)
	}
	opts := ""
	switch {
	case name == nil:
	case name.Affix():
		opts = ", { name: " + g.affixMatcher(name) + " }"
	case name.Match == domain.MatchExact || name.Match == "":
		opts = ", { name: " + g.nameValue(name, false) + ", exact: true }"
	default:
		opts = ", { name: " + g.nameMatcher(name) + " }"
	}
	parts := make([]string, len(aria))
	for i, r := range aria {
		parts[i] = base + ".getByRole(" + Str(r) + opts + ")"
		if i > 0 {
			parts[i] = ".or(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, "")
}

// nameValue is the name's text (a template, or the whole input).
func (g *gen) nameValue(n *domain.NameMatch, quote bool) string {
	if n.Input != "" {
		return g.inputExpr(n.Input, quote)
	}
	return g.template(n.Value, quote)
}

// nameMatcher is a RegExp for the non-exact match modes: normalized and
// contains fold case, punctuation and white space as targeting does; regex
// is the pattern, unanchored.
func (g *gen) nameMatcher(n *domain.NameMatch) string {
	switch n.Match {
	case domain.MatchRegex:
		if n.Input != "" || g.templated(n.Value) {
			return "new RegExp(" + g.nameValue(n, true) + ")"
		}
		src, err := regexSource(n.Value)
		if err != nil {
			return g.fail("name: %v", err)
		}
		return "new RegExp(" + Str(src) + ")"
	case domain.MatchNormalized, domain.MatchContains:
		if n.Input != "" || g.templated(n.Value) {
			return g.fail("name: a %s match of a value from an input has no locator", n.Match)
		}
		f := fold(n.Value)
		if f == "" {
			return g.fail("name %q folds to nothing", n.Value)
		}
		return "new RegExp(" + Str(foldRegex(f, n.Match == domain.MatchNormalized)) + ", 'iu')"
	}
	return g.fail("name match %q is unknown", n.Match)
}

// textMatcher is getByText's argument: exact text, or a RegExp.
func (g *gen) textMatcher(n *domain.NameMatch) string {
	if n.Affix() {
		return g.affixMatcher(n)
	}
	if n.Match == domain.MatchExact || n.Match == "" {
		return g.nameValue(n, false) + ", { exact: true }"
	}
	return g.nameMatcher(n)
}
