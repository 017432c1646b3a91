package codegen_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/codegen"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/browser"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const golden = "testdata/memberdesk.savings_balance.spec.ts"

// TestReferenceGolden holds the spec of the reference lookup, as the demo
// writes it, to its golden file (rewritten only with -update).
func TestReferenceGolden(t *testing.T) {
	t.Parallel()
	l := loadExample(t, "memberdesk.savings_balance")
	out := filepath.Join(t.TempDir(), "lookup.spec.ts")
	hint, err := codegen.WriteReference(l, exampleLibrary(t), browser.Flags(), out, codegen.DefaultBaseURL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, out, got)
	if !strings.HasPrefix(hint, "run it with: cd ") || !strings.Contains(hint, "CUA_SECRET_COREBANK_OPERATOR=… CUA_SECRET_COREBANK_PASSWORD=…") ||
		!strings.HasSuffix(hint, "npx playwright test lookup.spec.ts") {
		t.Errorf("hint %q", hint)
	}
	if strings.Contains(string(got), "// Effects.") || !strings.Contains(string(got), "const GUARDS: Guard[] = [\n];\n") || strings.Contains(string(got), "guard(\"") {
		t.Errorf("the lookup, which has no gated, elevated or irreversible step, has guards")
	}
	checkGolden(t, golden, got, l)
}

// checkGolden compares a spec with its golden file, the capability's
// version and content hash left out (the examples are re-sealed apart from
// codegen); -update rewrites the file.
func checkGolden(t *testing.T, path string, got []byte, l *capability.Loaded) {
	t.Helper()
	c := l.Capability
	norm := strings.ReplaceAll(string(got), codegen.Str(l.Hash), `"sha256:(the example's content hash)"`)
	norm = strings.ReplaceAll(norm, codegen.Str(c.Ref()), codegen.Str(c.ID+"@(the example's version)"))
	if *update {
		if err := os.WriteFile(path, []byte(norm), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if norm != string(want) {
		t.Errorf("the spec differs from %s (run go test -update after checking the change)", path)
	}
}

const transferGolden = "testdata/memberdesk.transfer_funds.spec.ts"

// TestTransferGuards: the transfer's spec says in its header which steps it
// stops before and what releases them, lists them in GUARDS in the order
// it runs them, and calls guard first in each of those steps, before its
// action; the whole spec is held to its golden file. The gated and
// irreversible steps are read from the example.
func TestTransferGuards(t *testing.T) {
	t.Parallel()
	l := loadExample(t, "memberdesk.transfer_funds")
	lib := exampleLibrary(t)
	spec, err := codegen.Generate(l, codegen.Options{FrameTitles: codegen.MemberDeskFrames, BrowserArgs: browser.Flags(), Library: lib})
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, "transfer.spec.ts", spec)
	s := string(spec)
	header, _, _ := strings.Cut(s, "import {")
	var gates []string
	n := 0
	for _, st := range l.Capability.Steps {
		if !st.Gate && st.Risk.Rank() == 0 {
			continue
		}
		n++
		var unless []string
		if st.Gate {
			gates = append(gates, st.ID)
			unless = append(unless, "CUA_RELEASE_GATE names "+st.ID)
		}
		if st.Risk == domain.RiskIrreversible {
			unless = append(unless, "CUA_ALLOW_IRREVERSIBLE=1")
		}
		kind := string(st.Risk)
		if st.Gate {
			kind += ", gated"
		}
		line := "//   step " + st.ID + " (" + kind + "): the test stops before it, failing, unless " + strings.Join(unless, " and ") + "\n"
		if len(unless) == 0 {
			line = "//   step " + st.ID + " (" + kind + "): the test performs it whenever it reaches it\n"
		}
		if !strings.Contains(header, line) {
			t.Errorf("the header lacks %q:\n%s", line, header)
		}
		entry := fmt.Sprintf("  { name: %q, step: %q, risk: %q, gate: %t },\n", st.ID, st.ID, st.Risk, st.Gate)
		if !strings.Contains(s, entry) {
			t.Errorf("GUARDS lacks %q", entry)
		}
		// The guard opens the step's body: nothing of the step comes before it.
		body := regexp.MustCompile(`\["` + regexp.QuoteMeta(st.ID) + `[:"][^\n]*, async \(\) => \{\n\s*(.*)\n`).FindStringSubmatch(s)
		if body == nil || body[1] != "guard("+codegen.Str(st.ID)+");" {
			t.Errorf("step %s does not start with its guard: %q", st.ID, body)
		}
	}
	if len(gates) == 0 || n < 2 {
		t.Fatalf("%s: want a gated step and another irreversible one", l.Capability.Ref())
	}
	if want := "// To perform every step: CUA_RELEASE_GATE=" + strings.Join(gates, ",") + " CUA_ALLOW_IRREVERSIBLE=1 npx playwright test\n"; !strings.Contains(header, want) {
		t.Errorf("the header lacks %q", want)
	}
	if got := len(codegen.Guards(l, lib)); got != n {
		t.Errorf("Guards lists %d steps, want %d", got, n)
	}
	checkGolden(t, transferGolden, spec, l)
}

// fakeLibrary resolves prerequisites from a map.
type fakeLibrary map[string]*capability.Loaded

func (f fakeLibrary) Lookup(ref string) (*capability.Loaded, error) {
	if l, ok := f[ref]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("no %s", ref)
}

// TestGuards covers which steps are guarded and what their notices say: a
// gated safe step needs its release only, an elevated step runs and is
// noted, a tier codegen does not know counts as irreversible, and a
// prerequisite's steps come first, named after their capability but
// released by their step id, as replay releases them.
func TestGuards(t *testing.T) {
	t.Parallel()
	l := edit(t, func(c *domain.Capability) {
		c.Steps[0].Gate = true
		c.Steps[1].Risk = domain.RiskElevated
		c.Steps[2].Risk = "catastrophic"
	})
	sub := &capability.Loaded{Capability: &domain.Capability{ID: "corebank.auth.sign_on", Version: "2.0.0",
		Steps: []domain.Step{{ID: "sign_on", Risk: domain.RiskElevated, Gate: true}, {ID: "look", Risk: domain.RiskSafe}}}}
	lib := fakeLibrary{}
	for _, p := range l.Capability.Prerequisites {
		lib[p.Capability] = sub
	}
	if len(lib) == 0 {
		t.Fatal("the lookup has no prerequisite")
	}
	st := l.Capability.Steps
	got := codegen.Guards(l, lib)
	want := []struct{ name, step, notice string }{
		{"corebank.auth.sign_on/sign_on", "sign_on", "step corebank.auth.sign_on/sign_on (elevated, gated): the test stops before it, failing, unless CUA_RELEASE_GATE names sign_on"},
		{st[0].ID, st[0].ID, "step " + st[0].ID + " (safe, gated): the test stops before it, failing, unless CUA_RELEASE_GATE names " + st[0].ID},
		{st[1].ID, st[1].ID, "step " + st[1].ID + " (elevated): the test performs it whenever it reaches it"},
		{st[2].ID, st[2].ID, "step " + st[2].ID + " (irreversible): the test stops before it, failing, unless CUA_ALLOW_IRREVERSIBLE=1"},
	}
	if len(got) != len(want) {
		t.Fatalf("Guards = %+v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].Name != w.name || got[i].Step != w.step || got[i].Notice() != w.notice {
			t.Errorf("guard %d = %+v %q, want %s %s %q", i, got[i], got[i].Notice(), w.name, w.step, w.notice)
		}
	}
	if env := got[0].Needs(); !slices.Equal(env, []string{"CUA_RELEASE_GATE=sign_on"}) {
		t.Errorf("Needs = %v", env)
	}
	if env := got[3].Needs(); !slices.Equal(env, []string{"CUA_ALLOW_IRREVERSIBLE=1"}) {
		t.Errorf("Needs = %v", env)
	}
}

var hostile = []string{
	`plain`,
	`"double" 'single' ` + "`back`",
	`${process.exit(1)} $$ $`,
	"line\nbreak\r\nand\ttab\x00nul\x1fus\x7fdel",
	"ls\u2028ps\u2029bom\ufeff",
	`</script><script>alert(1)</script> </SCRIPT> <!-- --> & &amp;`,
	`back\slash \\ \n \u2028 \"`,
	`*/ /* // comment`,
	"emoji 😀 and CJK 漢字 and combining e\u0301",
	"\xff invalid utf-8",
}

// TestStrRoundTrip evaluates every literal Str writes with node and gets
// the original string back (invalid UTF-8 as U+FFFD), and checks that no
// literal holds a raw character that could end it, a line or a script.
func TestStrRoundTrip(t *testing.T) {
	t.Parallel()
	var src strings.Builder
	src.WriteString("const xs = [\n")
	for _, s := range hostile {
		lit := codegen.Str(s)
		if strings.ContainsAny(lit, "\n\r\u2028\u2029`<>") || strings.Contains(lit, "${") {
			t.Errorf("Str(%q) = %s holds a raw dangerous character", s, lit)
		}
		src.WriteString("  " + lit + ",\n")
	}
	src.WriteString("];\nprocess.stdout.write(JSON.stringify(xs));\n")
	file := filepath.Join(t.TempDir(), "str.js")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "node", file).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for i, s := range hostile {
		if want := strings.ToValidUTF8(s, "\uFFFD"); got[i] != want {
			t.Errorf("round trip of %q: got %q", want, got[i])
		}
	}
}

// TestRolesPlaywrightAccepts checks the role map against the getByRole
// signature of the installed Playwright: every mapped role is one it
// accepts, and every canonical role it accepts is mapped or refused on
// purpose.
func TestRolesPlaywrightAccepts(t *testing.T) {
	t.Parallel()
	types, err := os.ReadFile(filepath.Join(playwrightDir(t), "node_modules", "playwright-core", "types", "types.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`getByRole\(role: ((?:"[a-z]+"\|?)+)`).FindSubmatch(types)
	if m == nil {
		t.Fatal("no getByRole signature in Playwright's types.d.ts")
	}
	accepted := map[string]bool{}
	for _, r := range strings.Split(string(m[1]), "|") {
		accepted[strings.Trim(r, `"`)] = true
	}
	for canon, aria := range codegen.PlaywrightRoles {
		if !domain.IsRole(canon) {
			t.Errorf("%q is not a canonical role", canon)
		}
		for _, r := range aria {
			if !accepted[r] {
				t.Errorf("canonical %q maps to %q, which getByRole does not accept", canon, r)
			}
		}
	}
	for r := range accepted {
		if !domain.IsRole(r) || domain.CanonicalRole(r) != r || slices.Contains(codegen.Unlocatable, r) {
			continue
		}
		if _, ok := codegen.PlaywrightRoles[r]; !ok {
			t.Errorf("canonical role %q, which getByRole accepts, is not mapped", r)
		}
	}
	for _, r := range codegen.Unlocatable {
		if !domain.IsRole(r) {
			t.Errorf("unlocatable %q is not a canonical role", r)
		}
	}
}

// edit returns the lookup capability with fn applied to a deep copy.
func edit(t *testing.T, fn func(c *domain.Capability)) *capability.Loaded {
	t.Helper()
	l := loadExample(t, "memberdesk.savings_balance")
	raw, err := json.Marshal(l.Capability)
	if err != nil {
		t.Fatal(err)
	}
	var c domain.Capability
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	fn(&c)
	return &capability.Loaded{Capability: &c, Hash: l.Hash, Sealed: true}
}

// firstPrerequisite stands for the refusal's place "prerequisite REF", REF
// as the example names its first prerequisite (id or id@version).
const firstPrerequisite = "(the first prerequisite)"

// TestRefusals: a part that cannot be expressed is refused with an error
// naming it, and no spec comes back.
func TestRefusals(t *testing.T) {
	t.Parallel()
	zero := 0
	tests := []struct {
		name      string
		edit      func(c *domain.Capability)
		opts      func(o *codegen.Options)
		wantWhere string
		wantIn    string
	}{
		{name: "region scope", edit: func(c *domain.Capability) { c.Steps[1].Target.Scope.Region = "Search" }, wantWhere: "step enter_member", wantIn: "region"},
		{name: "adjacent anchor", edit: func(c *domain.Capability) { c.Steps[3].Target.Anchor.Relation = domain.RelAdjacentTo }, wantWhere: "step read_status", wantIn: "adjacent_to"},
		{name: "iframe role", edit: func(c *domain.Capability) { c.Steps[0].Target.Role = domain.RoleIframe }, wantWhere: "step open_search", wantIn: "iframe"},
		{name: "http status outcome", edit: func(c *domain.Capability) {
			c.Outcomes[0].When = domain.Predicate{HTTPStatusIn: []int{404}}
		}, wantWhere: "outcome member_not_found", wantIn: "http_status_in"},
		{name: "untitled frame inside a titled one", edit: func(c *domain.Capability) { c.Steps[0].Target.Scope.Frame = "nav/menu" },
			wantWhere: "step open_search", wantIn: "--frame-title menu=TITLE"},
		{name: "go regex flag", edit: func(c *domain.Capability) {
			c.Steps[2].Target.Name = &domain.NameMatch{Value: "(?i)search", Match: domain.MatchRegex}
		}, wantWhere: "step search", wantIn: "flags"},
		{name: "ordinal zero", edit: func(c *domain.Capability) { c.Steps[2].Target.Ordinal = &zero }, wantWhere: "step search", wantIn: "ordinal 0"},
		{name: "dialog nobody answers", edit: func(c *domain.Capability) {
			c.Steps[2].Postcondition = &domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: domain.RoleAlertDialog}}
		}, wantWhere: "step search", wantIn: "JavaScript dialog"},
		{name: "raw input", edit: func(c *domain.Capability) { c.Steps[0].Action = domain.ActRawInput }, wantWhere: "step open_search", wantIn: "raw_input"},
		{name: "no library for a prerequisite", opts: func(o *codegen.Options) { o.Library = nil }, wantWhere: firstPrerequisite, wantIn: "library"},
		{name: "unknown input in a case", opts: func(o *codegen.Options) {
			o.Cases = []codegen.Case{{Name: "x", Inputs: map[string]string{"member": "12345"}}}
		}, wantWhere: "case x", wantIn: "input member is not declared"},
		{name: "input breaks its pattern", opts: func(o *codegen.Options) {
			o.Cases = []codegen.Case{{Inputs: map[string]string{"member_id": "1234"}}}
		}, wantWhere: "case 1", wantIn: "pattern"},
		{name: "undeclared outcome", opts: func(o *codegen.Options) {
			o.Cases = []codegen.Case{{Name: "x", Inputs: map[string]string{"member_id": "12345"}, Expect: "gone"}}
		}, wantWhere: "case x", wantIn: `expect "gone"`},
		{name: "sensitive input in a case", edit: func(c *domain.Capability) { c.Inputs[0].Sensitive = true }, opts: func(o *codegen.Options) {
			o.Cases = []codegen.Case{{Name: "x", Inputs: map[string]string{"member_id": "12345"}}}
		}, wantWhere: "case x", wantIn: "CUA_SECRET_MEMBER_ID"},
		{name: "guarded step id not plain", edit: func(c *domain.Capability) { c.Steps[0].Gate = true; c.Steps[0].ID = "open,search" }, wantWhere: "step open,search", wantIn: "CUA_RELEASE_GATE"},
		{name: "two cases one name", opts: func(o *codegen.Options) {
			o.Cases = []codegen.Case{{Name: "x", Inputs: map[string]string{"member_id": "12345"}}, {Name: "x", Inputs: map[string]string{"member_id": "23456"}}}
		}, wantWhere: "case x", wantIn: "two cases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := edit(t, func(c *domain.Capability) {
				if tt.edit != nil {
					tt.edit(c)
				}
			})
			o := codegen.Options{FrameTitles: codegen.MemberDeskFrames, Library: exampleLibrary(t)}
			if tt.opts != nil {
				tt.opts(&o)
			}
			spec, err := codegen.Generate(l, o)
			var re *codegen.RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("err %v, want a *RefusedError", err)
			}
			if spec != nil {
				t.Error("a refused capability still produced a spec")
			}
			if tt.wantWhere == firstPrerequisite {
				tt.wantWhere = "prerequisite " + l.Capability.Prerequisites[0].Capability
			}
			if re.Where != tt.wantWhere || !strings.Contains(re.Error(), tt.wantIn) {
				t.Errorf("refusal %q, want where %q and %q in it", re.Error(), tt.wantWhere, tt.wantIn)
			}
		})
	}
}

// TestSensitiveInputFromEnvironment: a sensitive input's value is read
// from its CUA_SECRET_ variable and never written, not even its example.
func TestSensitiveInputFromEnvironment(t *testing.T) {
	t.Parallel()
	l := edit(t, func(c *domain.Capability) { c.Inputs[0].Sensitive = true; c.Inputs[0].Example = "54321" })
	spec, err := codegen.Generate(l, codegen.Options{FrameTitles: codegen.MemberDeskFrames, Library: exampleLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	s := string(spec)
	if strings.Contains(s, "54321") || !strings.Contains(s, `fill(secret("CUA_SECRET_MEMBER_ID"))`) {
		t.Errorf("the sensitive input is not read from the environment:\n%s", s)
	}
}

// TestParseCase covers the --case syntax.
func TestParseCase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    codegen.Case
		wantErr string
	}{
		{in: "member_id=12345", want: codegen.Case{Inputs: map[string]string{"member_id": "12345"}}},
		{in: "member_id=99999,_expect=member_not_found,_name=gone", want: codegen.Case{Name: "gone", Expect: "member_not_found", Inputs: map[string]string{"member_id": "99999"}}},
		{in: "a=x=y,b=", want: codegen.Case{Inputs: map[string]string{"a": "x=y", "b": ""}}},
		{in: "", wantErr: "want NAME=VALUE"},
		{in: "a", wantErr: "is not NAME=VALUE"},
		{in: "=1", wantErr: "is not NAME=VALUE"},
		{in: "a=1,a=2", wantErr: "given twice"},
	}
	for _, tt := range tests {
		got, err := codegen.ParseCase(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCase(%q) err %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.Name != tt.want.Name || got.Expect != tt.want.Expect || len(got.Inputs) != len(tt.want.Inputs) {
			t.Errorf("ParseCase(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		for k, v := range tt.want.Inputs {
			if got.Inputs[k] != v {
				t.Errorf("ParseCase(%q) input %s = %q, want %q", tt.in, k, got.Inputs[k], v)
			}
		}
	}
}

// TestOptionalStepRendered: a step with when is rendered inside an if on
// its predicate, judged once where the step would run.
func TestOptionalStepRendered(t *testing.T) {
	t.Parallel()
	l := edit(t, func(c *domain.Capability) {
		c.Steps[1].When = &domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Dismiss", Match: domain.MatchExact}}}
	})
	spec, err := codegen.Generate(l, codegen.Options{FrameTitles: codegen.MemberDeskFrames, Library: exampleLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s*if \(\(await present\(page\.getByRole\("button", \{ name: "Dismiss"`).Match(spec) {
		t.Errorf("the optional step is not rendered inside an if on its when:\n%s", spec)
	}
}
