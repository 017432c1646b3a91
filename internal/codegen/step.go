package codegen

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// keyAliases are the key names press_key accepts that Playwright spells
// otherwise.
var keyAliases = map[string]string{
	"Return": "Enter", "Esc": "Escape", " ": "Space", "Spacebar": "Space",
	"Down": "ArrowDown", "Up": "ArrowUp", "Left": "ArrowLeft", "Right": "ArrowRight",
}

// step writes the body of step i of c. root says whether business
// outcomes are watched for (the capability under test) or not (a
// prerequisite).
func (g *gen) step(c *domain.Capability, i int, in string, root bool) string {
	st := &c.Steps[i]
	if st.ForEach != nil {
		return g.loopStep(c, i, in, root)
	}
	if st.When != nil {
		// An optional step: judged once, on the page the previous step left.
		return in + "if (" + g.pred(st.When) + ") {\n" + g.stepBody(c, i, in+"  ", root) + in + "}\n"
	}
	return g.stepBody(c, i, in, root)
}

// stepBody renders one step's action and checks (step renders its when).
func (g *gen) stepBody(c *domain.Capability, i int, in string, root bool) string {
	st := &c.Steps[i]
	var w strings.Builder
	line := func(format string, args ...any) {
		for _, l := range strings.Split(fmt.Sprintf(format, args...), "\n") {
			w.WriteString(in + l + "\n")
		}
	}
	timeout := g.opts.TimeoutMS
	if st.Wait != nil && st.Wait.TimeoutMS > 0 {
		timeout = st.Wait.TimeoutMS
	}
	outcomes := "[]"
	if root {
		outcomes = "outcomes"
	}
	label := Str("step " + st.ID)
	if call := g.guardCall(c, st); call != "" {
		line("%s", call)
	}
	if st.Precondition != nil {
		line("await expect.poll(async () => %s, { message: %s, timeout: %d }).toBe(true);", g.pred(st.Precondition), Str("the precondition of step "+st.ID), timeout)
	}
	if answer, ok := dialogAnswer(c, i); ok {
		line("if (dialog === undefined || pending === undefined) {")
		line("  throw new Error(%s);", Str("step "+st.ID+": no JavaScript dialog is open"))
		line("}")
		line("await dialog.%s();", answer)
		line("await pending;")
		line("dialog = undefined;")
		g.settle(&w, in, st, label, outcomes, timeout, root)
		return w.String()
	}
	act := g.action(c, st, timeout)
	if opensDialog(st) {
		if _, ok := dialogAnswer(c, i+1); !ok {
			return g.fail("the step opens a JavaScript dialog that the next step does not answer (click OK or Cancel)")
		}
		g.dialogs = true
		line("const opened = page.waitForEvent('dialog', { timeout: %d });", timeout)
		line("pending = (async () => {")
		line("%s", strings.TrimSuffix(indent(act+"\n", "  "), "\n"))
		line("})();")
		line("dialog = await opened;")
		if n := st.Postcondition.NodeExists.Name; n != nil {
			line("expect(%s.test(dialog.message()), %s).toBe(true);", g.dialogName(n), Str("the dialog of step "+st.ID))
		}
		return w.String()
	}
	if act != "" {
		line("%s", act)
	}
	g.settle(&w, in, st, label, outcomes, timeout, root)
	return w.String()
}

// settle writes the wait for a step's postcondition (or, for wait_for,
// its until predicate), watching the business outcomes.
func (g *gen) settle(w *strings.Builder, in string, st *domain.Step, label, outcomes string, timeout int, root bool) {
	p := st.Postcondition
	if st.Action == domain.ActWaitFor && st.Wait != nil {
		p = st.Wait.Until
	}
	if p == nil || st.Action == domain.ActAssert {
		return
	}
	check := "async () => " + g.pred(p)
	if root {
		fmt.Fprintf(w, "%soutcome = await settle(page, %s, %s, outcomes, %d);\n", in, label, check, timeout)
		return
	}
	fmt.Fprintf(w, "%sawait settle(page, %s, %s, %s, %d);\n", in, label, check, outcomes, timeout)
}

// action is the statement that performs the step.
func (g *gen) action(c *domain.Capability, st *domain.Step, timeout int) string {
	switch st.Action {
	case domain.ActClick:
		return "await " + g.locator(st.Target) + ".click();"
	case domain.ActFocus:
		return "await " + g.locator(st.Target) + ".focus();"
	case domain.ActType:
		return "await " + g.locator(st.Target) + ".fill(" + g.value(st) + ");"
	case domain.ActSelect:
		return "await " + g.locator(st.Target) + ".selectOption(" + g.value(st) + ");"
	case domain.ActPressKey:
		key := st.Key
		if k, ok := keyAliases[key]; ok {
			key = k
		}
		if key == "" {
			return g.fail("press_key without a key")
		}
		if st.Target != nil {
			return "await " + g.locator(st.Target) + ".press(" + Str(key) + ");"
		}
		return "await page.keyboard.press(" + Str(key) + ");"
	case domain.ActNavigate:
		return "await page.goto(" + g.urlExpr(st.URL) + ");"
	case domain.ActReload:
		return "await page.reload();"
	case domain.ActWaitFor:
		if st.Wait == nil || st.Wait.Until == nil {
			return g.fail("wait_for without wait.until")
		}
		return ""
	case domain.ActAssert:
		if st.Postcondition == nil {
			return g.fail("assert without a postcondition")
		}
		return fmt.Sprintf("await expect.poll(async () => %s, { message: %s, timeout: %d }).toBe(true);", g.pred(st.Postcondition), Str("the assertion of step "+st.ID), timeout)
	case domain.ActExtract:
		return g.extract(c, st, timeout)
	}
	return g.fail("action %q has no Playwright equivalent", st.Action)
}

// value is the text a type or select step enters.
func (g *gen) value(st *domain.Step) string {
	v := st.Value
	switch v.Kind() {
	case "literal":
		return Str(*v.Literal)
	case "input":
		return g.inputExpr(v.Input, false)
	case "secret":
		return "secret(" + Str(SecretEnv(v.Secret)) + ")"
	case "output":
		return "output(outputs, " + Str(v.Output) + ")"
	case "item":
		return g.itemExpr(v.Item, false)
	}
	return g.fail("the step has no value")
}

// extract reads the target's text, applies the step's transform and
// stores the output.
func (g *gen) extract(c *domain.Capability, st *domain.Step, timeout int) string {
	if st.Into == "" {
		return g.fail("extract without into")
	}
	if c != g.root {
		return g.fail("a prerequisite's outputs are not returned")
	}
	spec := c.Output(st.Into)
	kind, currency := "", ""
	if spec != nil {
		kind, currency = string(spec.Type), spec.Currency
	}
	if kind == string(domain.TypeArray) {
		kind = string(domain.TypeString) // one value of a list output
	}
	loc := g.locator(st.Target)
	var b strings.Builder
	fmt.Fprintf(&b, "const target = %s;\n", loc)
	fmt.Fprintf(&b, "await expect(target).toHaveCount(1, { timeout: %d });\n", timeout)
	b.WriteString("let text = await valueOf(target);\n")
	if n := st.Target.Name; n != nil && n.Match == domain.MatchRegex && !n.Affix() && !picksOwnValue(st.Transform) {
		fmt.Fprintf(&b, "text = %s.exec(text)?.[0] ?? text;\n", g.nameMatcher(n))
	}
	var val string
	t := st.Transform
	switch t.Kind() {
	case domain.TransformNameMoney:
		val = "money(text, " + Str(currency) + ")"
	case domain.TransformNameDate:
		val = "date(text)"
	case "":
		val = "text.trim()"
	case domain.TransformNameTrim:
		val = "typed(" + Str(kind) + ", " + Str(currency) + ", text.trim())"
	case "regex":
		src, err := regexSource(t.Regex)
		if err != nil {
			return g.fail("transform: %v", err)
		}
		if re, err := regexp.Compile(t.Regex); err != nil || re.NumSubexp() != 1 {
			return g.fail("transform regex %q needs exactly one capture group", t.Regex)
		}
		val = "typed(" + Str(kind) + ", " + Str(currency) + ", capture(text, " + Str(src) + "))"
	case "strip_prefix":
		val = "typed(" + Str(kind) + ", " + Str(currency) + ", stripPrefix(text, " + Str(t.StripPrefix) + "))"
	default:
		return g.fail("transform %s is unknown", t)
	}
	b.WriteString(g.collectOutput(st.Into, val))
	return b.String()
}

// opensDialog reports whether the step's postcondition is a JavaScript
// dialog: an unscoped alertdialog, as the browser surface shows one.
func opensDialog(st *domain.Step) bool {
	p := st.Postcondition
	if p == nil || p.NodeExists == nil {
		return false
	}
	d := p.NodeExists
	return domain.CanonicalRole(d.Role) == domain.RoleAlertDialog && (d.Scope == nil || *d.Scope == domain.Scope{}) && d.Anchor == nil
}

// dialogAnswer reports whether step i clicks the OK or Cancel button of a
// JavaScript dialog the step before it opened, and the Playwright call
// that answers it.
func dialogAnswer(c *domain.Capability, i int) (string, bool) {
	if i <= 0 || i >= len(c.Steps) || !opensDialog(&c.Steps[i-1]) {
		return "", false
	}
	st := &c.Steps[i]
	t := st.Target
	if st.Action != domain.ActClick || t == nil || domain.CanonicalRole(t.Role) != domain.RoleButton || t.Name == nil ||
		(t.Scope != nil && *t.Scope != domain.Scope{}) || t.Anchor != nil {
		return "", false
	}
	switch t.Name.Value {
	case "OK":
		return "accept", true
	case "Cancel":
		return "dismiss", true
	}
	return "", false
}

// dialogName is a RegExp for a dialog's message.
func (g *gen) dialogName(n *domain.NameMatch) string {
	if n.Affix() {
		return g.affixMatcher(n)
	}
	if n.Match == domain.MatchExact || n.Match == "" {
		return "exactly(" + g.nameValue(n, false) + ")"
	}
	return g.nameMatcher(n)
}
