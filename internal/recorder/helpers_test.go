package recorder

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

var update = flag.Bool("update", false, "rewrite golden files")

const examples = "../../examples/capabilities"

// fixedNow is the injected compile time (UTC 2026-11-30T14:30:00Z).
func fixedNow() time.Time {
	return time.Date(2026, 11, 30, 9, 30, 0, 0, time.FixedZone("EST", -5*3600))
}

// loadTrace decodes a JSON trace from testdata.
func loadTrace(tb testing.TB, name string) *domain.Trace {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	var t domain.Trace
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		tb.Fatalf("decode %s: %v", name, err)
	}
	return &t
}

// loadExample loads a reference capability.
func loadExample(tb testing.TB, id string) *domain.Capability {
	tb.Helper()
	l, err := capability.Load(filepath.Join(examples, id+".yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	return l.Capability
}

// savingsOptions are the options the savings-balance golden is compiled
// with.
func savingsOptions(tb testing.TB) Options {
	tb.Helper()
	return Options{
		ID:      "memberdesk.savings_balance",
		Version: "1.1.0",
		Title:   "Look up a member's savings balance",
		Now:     fixedNow,
		KnownCapabilities: map[string]*domain.Capability{
			"corebank.auth.sign_on":      loadExample(tb, "corebank.auth.sign_on"),
			"memberdesk.savings_balance": loadExample(tb, "memberdesk.savings_balance"),
		},
	}
}

// checkGolden compares got with the golden file, or rewrites it with
// -update.
func checkGolden(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			tb.Fatalf("%s differs from the output at line %d (run go test -update to accept):\n got: %s\nwant: %s", path, i+1, g, w)
		}
	}
}

// mustCompile compiles t and checks that the YAML it writes loads and
// hashes like the compiled capability.
func mustCompile(tb testing.TB, t *domain.Trace, opts Options) (*Result, []byte) {
	tb.Helper()
	res, err := Compile(t, opts)
	if err != nil {
		tb.Fatalf("Compile: %v", err)
	}
	data, err := Marshal(res.Capability, res.Notes)
	if err != nil {
		tb.Fatalf("Marshal: %v", err)
	}
	l, err := capability.Parse("compiled.yaml", data)
	if err != nil {
		tb.Fatalf("Parse:\n%s\n%v", data, err)
	}
	h, err := capability.Hash(res.Capability)
	if err != nil {
		tb.Fatal(err)
	}
	if l.Hash != h {
		tb.Fatalf("the written file hashes %s, the compiled capability %s", l.Hash, h)
	}
	return res, data
}

// Trace builders for table tests.

const testBase = "http://127.0.0.1:8811"

func testOptions() Options { return Options{ID: "test.recorded", Now: fixedNow} }

func traceOf(goal string, steps ...domain.TraceStep) *domain.Trace {
	for i := range steps {
		steps[i].Index = i
		if steps[i].Verdict == "" {
			steps[i].Verdict = "ok"
		}
		if steps[i].Action.Actor == "" {
			steps[i].Action.Actor = domain.ActorAgent
		}
	}
	return &domain.Trace{
		Goal: goal, BaseURL: testBase, Surface: domain.SurfaceWeb, Model: "test-model",
		RunID: "run-test", Finished: true, Steps: steps,
	}
}

func target(role, name, frame string) *domain.TargetDescriptor {
	d := &domain.TargetDescriptor{Role: role, RecordedStrategy: domain.StrategySemanticExact}
	if name != "" {
		d.Name = &domain.NameMatch{Value: name, Match: domain.MatchExact}
	}
	if frame != "" {
		d.Scope = &domain.Scope{Frame: frame}
	}
	return d
}

func clickStep(role, name string) domain.TraceStep {
	return domain.TraceStep{
		Action:    domain.Action{Type: domain.ActClick},
		Target:    target(role, name, "content"),
		URLBefore: testBase + "/",
	}
}

func typeStep(name, lit string) domain.TraceStep {
	return domain.TraceStep{
		Action:    domain.Action{Type: domain.ActType, Value: domain.Lit(lit)},
		Target:    target("textbox", name, "content"),
		Node:      &domain.Node{Role: "textbox", Name: name, Frame: "content"},
		Literal:   lit,
		URLBefore: testBase + "/",
	}
}

func extractStep(anchor, into, text string) domain.TraceStep {
	return domain.TraceStep{
		Action: domain.Action{Type: domain.ActExtract},
		Target: &domain.TargetDescriptor{
			Role: "cell", Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: anchor},
			Scope: &domain.Scope{Frame: "content"}, RecordedStrategy: domain.StrategyStructuralAnchor,
		},
		Node:      &domain.Node{Role: "cell", Name: text, Frame: "content"},
		Into:      into,
		Extracted: text,
		URLBefore: testBase + "/",
	}
}

func stepIDs(c *domain.Capability) []string {
	var ids []string
	for _, s := range c.Steps {
		ids = append(ids, s.ID)
	}
	return ids
}

// hasNote reports whether some note contains every fragment.
func hasNote(notes []string, fragments ...string) bool {
	for _, n := range notes {
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(n, f)
		}
		if ok {
			return true
		}
	}
	return false
}
