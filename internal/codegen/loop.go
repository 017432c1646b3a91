package codegen

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// loopStep renders a for_each step: a for loop over the case's list input
// (JSON text, as cua takes it), each iteration running the inner steps as
// test steps named LOOP[N].INNER, the ids a replay records.
func (g *gen) loopStep(c *domain.Capability, i int, in string, root bool) string {
	st := &c.Steps[i]
	fe := st.ForEach
	if !root {
		return g.fail("a prerequisite's loop is not rendered")
	}
	spec := c.Input(fe.Input)
	if spec == nil || spec.Type != domain.TypeArray {
		return g.fail("for_each: input %s is not a list", fe.Input)
	}
	inner := *c
	inner.Steps = fe.Steps
	savedRoot, savedAs := g.root, g.loopAs
	g.root, g.loopAs = &inner, fe.As
	defer func() { g.root, g.loopAs = savedRoot, savedAs }()
	var w strings.Builder
	fmt.Fprintf(&w, "%sfor (const [n, item] of (JSON.parse(input(c, %s)) as any[]).entries()) {\n", in, Str(fe.Input))
	for j := range fe.Steps {
		s := &fe.Steps[j]
		g.where = "step " + domain.LoopStepID(st.ID, s.ID)
		fmt.Fprintf(&w, "%s  await test.step(%s + n + %s, async () => {\n", in, Str(st.ID+"["), Str("]."+s.ID))
		w.WriteString(g.step(&inner, j, in+"    ", root))
		fmt.Fprintf(&w, "%s  });\n%s  if (outcome !== '') {\n%s    break;\n%s  }\n", in, in, in, in)
	}
	w.WriteString(in + "}\n")
	return w.String()
}

// itemPlaceholder matches {AS} and {AS.FIELD} of the loop being written.
func (g *gen) itemPlaceholder() *regexp.Regexp {
	return regexp.MustCompile(`\{(?:input\.([a-z][a-z0-9_]*)|` + regexp.QuoteMeta(g.loopAs) + `(?:\.([a-z][a-z0-9_]*))?)\}`)
}

// loopTemplate is template inside a loop: {input.NAME} and the element's
// {AS} / {AS.FIELD} placeholders.
func (g *gen) loopTemplate(text string, quote bool) string {
	re := g.itemPlaceholder()
	ms := re.FindAllStringSubmatchIndex(text, -1)
	if len(ms) == 0 {
		return Str(text)
	}
	var parts []string
	at := 0
	for _, m := range ms {
		if m[0] > at {
			parts = append(parts, Str(text[at:m[0]]))
		}
		switch {
		case m[2] >= 0:
			parts = append(parts, g.inputExpr(text[m[2]:m[3]], quote))
		case m[4] >= 0:
			parts = append(parts, g.itemExpr(g.loopAs+"."+text[m[4]:m[5]], quote))
		default:
			parts = append(parts, g.itemExpr(g.loopAs, quote))
		}
		at = m[1]
	}
	if at < len(text) {
		parts = append(parts, Str(text[at:]))
	}
	return strings.Join(parts, " + ")
}

// itemExpr is the iteration's element ("item") or one of its fields
// ("item.qty") as a string; quote escapes it for a regular expression.
func (g *gen) itemExpr(ref string, quote bool) string {
	if g.loopAs == "" {
		return g.fail("$item outside a loop")
	}
	e := "String(item)"
	if _, field, ok := strings.Cut(ref, "."); ok {
		e = "String(item[" + Str(field) + "])"
	}
	if quote {
		return "reEscape(" + e + ")"
	}
	return e
}

// collectOutput is the statement that stores an extracted value: inside a
// loop, an output of type array collects one value per iteration.
func (g *gen) collectOutput(name, val string) string {
	if spec := g.root.Output(name); g.loopAs != "" && spec != nil && spec.Type == domain.TypeArray {
		return fmt.Sprintf("(lists[%s] ??= []).push(%s);", Str(name), val)
	}
	return fmt.Sprintf("outputs[%s] = %s;", Str(name), val)
}

// expectListOutput checks each value a list output collected.
func (g *gen) expectListOutput(o domain.OutputSpec, pat string) string {
	return fmt.Sprintf("    expect((lists[%s] ?? []).length > 0 || %t, %s).toBe(true);\n    for (const v of lists[%s] ?? []) {\n      expectOutput(%s, v, 'string', %s, %s, %t);\n    }\n",
		Str(o.Name), !o.Required, Str("output "+o.Name+" is extracted"), Str(o.Name), Str(o.Name), strList(o.Enum), Str(pat), o.Sensitive)
}

// caseValue renders a case's bound input as the spec reads it: a list as
// its JSON text, any other value as text.
func caseValue(v any) string {
	if list, ok := v.([]any); ok {
		if s, err := capability.ListValue(list); err == nil {
			return s
		}
	}
	return fmt.Sprint(v)
}

// templated reports whether text holds a placeholder: {input.NAME}, or
// inside a loop its element's {AS} / {AS.FIELD}.
func (g *gen) templated(text string) bool {
	return templateRE.MatchString(text) || g.loopAs != "" && g.itemPlaceholder().MatchString(text)
}

// loopURL renders a part of a navigate URL inside a loop: {input.NAME}
// and the element's placeholders, each value URL-escaped.
func (g *gen) loopURL(p string) []string {
	re := g.itemPlaceholder()
	var out []string
	at := 0
	for _, m := range re.FindAllStringSubmatchIndex(p, -1) {
		if m[0] > at {
			out = append(out, Str(p[at:m[0]]))
		}
		switch {
		case m[2] >= 0:
			out = append(out, "encodeURIComponent("+g.inputExpr(p[m[2]:m[3]], false)+")")
		case m[4] >= 0:
			out = append(out, "encodeURIComponent("+g.itemExpr(g.loopAs+"."+p[m[4]:m[5]], false)+")")
		default:
			out = append(out, "encodeURIComponent("+g.itemExpr(g.loopAs, false)+")")
		}
		at = m[1]
	}
	if at < len(p) {
		out = append(out, Str(p[at:]))
	}
	return out
}
