package codegen

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// The environment variables a generated spec reads, when it runs, to
// release its guarded steps.
const (
	// ReleaseGateEnv names the gated steps a reviewer released: step ids,
	// comma-separated (replay's --release-gate).
	ReleaseGateEnv = "CUA_RELEASE_GATE"
	// AllowIrreversibleEnv set to 1 allows the irreversible steps (replay's
	// --allow-irreversible).
	AllowIrreversibleEnv = "CUA_ALLOW_IRREVERSIBLE"
)

// Guard is a step whose effect a generated spec does not hide, as replay
// treats it: a gated step runs only when [ReleaseGateEnv] names it, an
// irreversible one only when [AllowIrreversibleEnv] is 1; without them the
// test fails before the step, naming what to set, and sends nothing of it.
// An elevated step that is not gated runs whenever the test reaches it.
// Every step a guard lets through is reported as an "effect" annotation.
type Guard struct {
	Capability string // id@version of the capability holding the step
	// Step is the step's id: what CUA_RELEASE_GATE names, for a
	// prerequisite's step too, as replay releases gates by step id.
	Step string
	// Name is Step, or "capability-id/step" for a prerequisite's step (the
	// name replay gives it in a run record).
	Name string
	// Risk is safe, elevated or irreversible (a tier codegen does not know
	// is written as irreversible: it fails closed).
	Risk domain.Risk
	Gate bool
}

// Irreversible reports whether the step needs CUA_ALLOW_IRREVERSIBLE=1.
func (g Guard) Irreversible() bool { return g.Risk == domain.RiskIrreversible }

// Needs is the environment the test needs to perform the step.
func (g Guard) Needs() []string {
	var env []string
	if g.Gate {
		env = append(env, ReleaseGateEnv+"="+g.Step)
	}
	if g.Irreversible() {
		env = append(env, AllowIrreversibleEnv+"=1")
	}
	return env
}

// Notice is the line that says what the spec does with the step: printed
// by cua codegen on stderr and written in the spec's header.
func (g Guard) Notice() string {
	kind := string(g.Risk)
	if g.Gate {
		kind += ", gated"
	}
	head := "step " + g.Name + " (" + kind + "): "
	var unless []string
	if g.Gate {
		unless = append(unless, ReleaseGateEnv+" names "+g.Step)
	}
	if g.Irreversible() {
		unless = append(unless, AllowIrreversibleEnv+"=1")
	}
	if len(unless) == 0 {
		return head + "the test performs it whenever it reaches it"
	}
	return head + "the test stops before it, failing, unless " + strings.Join(unless, " and ")
}

// Guards lists the gated, elevated and irreversible steps of l and of the
// prerequisites lib resolves, in the order a spec runs them
// (prerequisites first), each once. A prerequisite lib cannot resolve is
// left out (generating the spec refuses it).
func Guards(l *capability.Loaded, lib Resolver) []Guard {
	if l == nil || l.Capability == nil {
		return nil
	}
	var out []Guard
	seen := map[string]bool{}
	var walk func(c *domain.Capability, root bool, depth int)
	walk = func(c *domain.Capability, root bool, depth int) {
		if lib != nil && depth <= 3 {
			for _, p := range c.Prerequisites {
				if sub, err := lib.Lookup(p.Capability); err == nil && sub.Capability != nil {
					walk(sub.Capability, false, depth+1)
				}
			}
		}
		for i := range c.Steps {
			g, ok := guardOf(c, &c.Steps[i], root)
			if ok && !seen[g.Name] {
				seen[g.Name] = true
				out = append(out, g)
			}
		}
	}
	walk(l.Capability, true, 0)
	return out
}

// guardOf is the guard of a step, if it needs one.
func guardOf(c *domain.Capability, st *domain.Step, root bool) (Guard, bool) {
	risk := st.Risk
	switch r := risk.Rank(); {
	case r == 0:
		risk = domain.RiskSafe
	case r >= domain.RiskIrreversible.Rank():
		risk = domain.RiskIrreversible
	}
	if !st.Gate && risk == domain.RiskSafe {
		return Guard{}, false
	}
	name := st.ID
	if !root {
		name = c.ID + "/" + st.ID
	}
	return Guard{Capability: c.Ref(), Step: st.ID, Name: name, Risk: risk, Gate: st.Gate}, true
}

// plainName is what a guarded step's id and its capability's reference
// must be to be named in the header's comment and in CUA_RELEASE_GATE (the
// schema's patterns; a comma or a space could not be released).
var (
	plainStep = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	plainRef  = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+@[0-9A-Za-z.+-]+$`)
)

// guards collects the spec's guards, refusing one whose names cannot be
// written plainly.
func (g *gen) guards(l *capability.Loaded) []Guard {
	gs := Guards(l, g.opts.Library)
	for _, x := range gs {
		if !plainStep.MatchString(x.Step) || !plainRef.MatchString(x.Capability) {
			g.refuse("step "+x.Step, "a gated, elevated or irreversible step needs a plain step id (%s) and capability reference to be released by %s", plainStep, ReleaseGateEnv)
			return nil
		}
	}
	g.guardNames = map[string]string{}
	for _, x := range gs {
		g.guardNames[x.Capability+" "+x.Step] = x.Name
	}
	return gs
}

// guardCall is the statement that opens a guarded step's body, or "".
func (g *gen) guardCall(c *domain.Capability, st *domain.Step) string {
	name, ok := g.guardNames[c.Ref()+" "+st.ID]
	if !ok {
		return ""
	}
	return "guard(" + Str(name) + ");"
}

// guardComment writes the header's account of the guarded steps.
func guardComment(b *bytes.Buffer, gs []Guard) {
	if len(gs) == 0 {
		return
	}
	b.WriteString("//\n")
	b.WriteString("// Effects. The test stops, failing, before a gated step unless CUA_RELEASE_GATE (step ids,\n")
	b.WriteString("// comma-separated) names it, and before an irreversible step unless CUA_ALLOW_IRREVERSIBLE=1:\n")
	b.WriteString("// nothing of a step it stops before is sent, and the failure names what to set. An elevated\n")
	b.WriteString("// step that is not gated runs. Each guarded step performed is reported as an 'effect' annotation.\n")
	var gates []string
	irreversible := false
	for _, x := range gs {
		fmt.Fprintf(b, "//   %s\n", x.Notice())
		if x.Gate && !slices.Contains(gates, x.Step) {
			gates = append(gates, x.Step)
		}
		irreversible = irreversible || x.Irreversible()
	}
	var env []string
	if len(gates) > 0 {
		env = append(env, ReleaseGateEnv+"="+strings.Join(gates, ","))
	}
	if irreversible {
		env = append(env, AllowIrreversibleEnv+"=1")
	}
	if len(env) > 0 {
		fmt.Fprintf(b, "// To perform every step: %s npx playwright test\n", strings.Join(env, " "))
	}
}

// guardTable writes the GUARDS table the runtime's guard reads.
func guardTable(b *bytes.Buffer, gs []Guard) {
	b.WriteString("type Guard = { name: string; step: string; risk: string; gate: boolean };\n\n")
	b.WriteString("// The gated, elevated and irreversible steps, in the order the test runs them.\n")
	b.WriteString("const GUARDS: Guard[] = [\n")
	for _, x := range gs {
		fmt.Fprintf(b, "  { name: %s, step: %s, risk: %s, gate: %t },\n", Str(x.Name), Str(x.Step), Str(string(x.Risk)), x.Gate)
	}
	b.WriteString("];\n\n")
}
