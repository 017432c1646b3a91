package replay_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// docsPage is the capability format's reference page.
const docsPage = "../../docs/reference/capability.md"

// docExample is one ```yaml block of docs/reference/capability.md.
type docExample struct {
	line int    // of the block's first line in the page
	text string // dedented
}

// docExamples returns the ```yaml blocks of the page, dedented by their
// fence's indentation.
func docExamples(t *testing.T) []docExample {
	t.Helper()
	raw, err := os.ReadFile(docsPage)
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	var cur *docExample
	indent := ""
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && trim == "```yaml":
			indent = line[:len(line)-len(trim)]
			cur = &docExample{line: n + 1}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += strings.TrimPrefix(line, indent) + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a ```yaml block is not closed", docsPage, cur.line)
	}
	return out
}

// docKind says what a block is: "comment" (only comments: the editor
// modeline), "replayed" (a complete capability whose first line is
// "# replayed: TestDocsExamples/NAME"), "verbatim" (a complete capability
// that reproduces a file of examples/capabilities), "unchecked" (first
// line "# fragment": only parsed as YAML) or "fragment" (spliced into the
// reference lookup and validated).
func docKind(e docExample) string {
	first, body := "", false
	for _, l := range strings.Split(e.text, "\n") {
		l = strings.TrimSpace(l)
		if first == "" && l != "" {
			first = l
		}
		if l != "" && !strings.HasPrefix(l, "#") {
			body = true
		}
	}
	switch {
	case !body:
		return "comment"
	case strings.HasPrefix(first, "# replayed: "):
		return "replayed"
	case first == "# fragment":
		return "unchecked"
	case regexp.MustCompile(`(?m)^schema_version:`).MatchString(e.text):
		return "verbatim"
	}
	return "fragment"
}

// TestDocsExamples (issue 24 item 9) keeps docs/reference/capability.md's examples
// true. Each complete capability marked "# replayed: TestDocsExamples/NAME"
// runs in the subtest NAME on real Chromium against MemberDesk, once per
// "# run:" line (inputs from each input's example unless the line sets
// them, a MemberDesk fault armed when it names one) and must end as the
// line says. A complete capability without the mark must reproduce a file
// of examples/capabilities byte for byte, and is replayed too. Every other
// block is a fragment, spliced into docBase and validated with no problem
// allowed: a bare list is steps added after the base's; a steps key gives
// all the steps; the items of another list (inputs, outputs, outcomes,
// recovery, prerequisites) replace the base's item of the same name, id,
// code or capability or are added; a map's keys override the base's; the
// capability's risk rises to its riskiest step's. A block whose first line
// is "# fragment" is only parsed as YAML.
func TestDocsExamples(t *testing.T) {
	examples := docExamples(t)
	var replayed []docExample
	names := map[string]int{}
	for _, e := range examples {
		switch docKind(e) {
		case "replayed":
			name := docReplayName(t, e)
			if prev, dup := names[name]; dup {
				t.Fatalf("%s:%d: replayed name %q is used at line %d too", docsPage, e.line, name, prev)
			}
			names[name] = e.line
			replayed = append(replayed, e)
		case "verbatim":
			checkVerbatim(t, e)
			replayed = append(replayed, e)
		case "unchecked":
			var v any
			if err := yaml.Unmarshal([]byte(e.text), &v); err != nil {
				t.Errorf("%s:%d: a # fragment block is not YAML: %v", docsPage, e.line, err)
			}
		case "fragment":
			checkFragment(t, e)
		}
	}
	if len(replayed) < 3 {
		t.Fatalf("%d replayed examples in %s, want the reference lookup and at least two marked ones", len(replayed), docsPage)
	}
	if testing.Short() {
		t.Skip("replaying the examples needs Chromium")
	}
	br, err := browser.Launch(t.Context(), browser.Options{})
	if err != nil {
		t.Fatalf("launch Chromium: %v", err)
	}
	t.Cleanup(func() { _ = br.Close() })
	lib, err := replay.LoadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range replayed {
		name := "verbatim_" + fmt.Sprint(e.line)
		if docKind(e) == "replayed" {
			name = docReplayName(t, e)
		}
		t.Run(name, func(t *testing.T) {
			l, err := capability.Parse(fmt.Sprintf("%s:%d", docsPage, e.line), []byte(e.text))
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range docRuns(t, e, l.Capability) {
				replayDocRun(t, br, lib, l, r, fmt.Sprintf("docs-%s-%d", name, i))
			}
		})
	}
}

// docReplayName is NAME of the block's "# replayed: TestDocsExamples/NAME".
func docReplayName(t *testing.T, e docExample) string {
	t.Helper()
	m := regexp.MustCompile(`^\s*# replayed: TestDocsExamples/([a-z0-9_]+)\s*\n`).FindStringSubmatch(e.text)
	if m == nil {
		t.Fatalf("%s:%d: want a first line \"# replayed: TestDocsExamples/NAME\" (NAME of a-z, 0-9 and _)", docsPage, e.line)
	}
	return m[1]
}

// docRun is one "# run: [INPUT=VALUE ...] [fault=NAME@AFTER] -> STATUS
// [CODE] [OUTPUT=VALUE ...]" line: the inputs it sets, the fault it arms
// (to fire once after AFTER eligible requests), the status, the failure or
// outcome code and the outputs the run must end with.
type docRun struct {
	inputs       map[string]string
	fault        string
	after        int
	status, code string
	outputs      map[string]string
}

var docRunRE = regexp.MustCompile(`(?m)^# run: (.*?)\s*-> ([A-Z_]+)((?: \S+)*)\s*$`)

// docRuns reads the block's run lines; none is one run ending SUCCESS.
func docRuns(t *testing.T, e docExample, c *domain.Capability) []docRun {
	t.Helper()
	examples := map[string]string{}
	for _, in := range c.Inputs {
		if in.Example != nil {
			examples[in.Name] = fmt.Sprint(in.Example)
		}
	}
	var runs []docRun
	for _, m := range docRunRE.FindAllStringSubmatch(e.text, -1) {
		r := docRun{inputs: maps.Clone(examples), status: m[2], outputs: map[string]string{}}
		for _, f := range strings.Fields(m[3]) {
			if k, v, ok := strings.Cut(f, "="); ok {
				r.outputs[k] = v
			} else {
				r.code = f
			}
		}
		for _, f := range strings.Fields(m[1]) {
			k, v, ok := strings.Cut(f, "=")
			switch {
			case !ok:
				t.Fatalf("%s:%d: run field %q is not KEY=VALUE", docsPage, e.line, f)
			case k == "fault":
				name, after, _ := strings.Cut(v, "@")
				r.fault = name
				if _, err := fmt.Sscan(after, &r.after); after != "" && err != nil {
					t.Fatalf("%s:%d: fault %q: AFTER is not a number", docsPage, e.line, v)
				}
			default:
				r.inputs[k] = v
			}
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		runs = []docRun{{inputs: examples, status: string(domain.StatusSuccess)}}
	}
	return runs
}

// replayDocRun replays l once on a fresh MemberDesk and a fresh session
// and checks how it ended.
func replayDocRun(t *testing.T, br *browser.Browser, lib *replay.DirLibrary, l *capability.Loaded, r docRun, id string) {
	t.Helper()
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = app.Close() }()
	if r.fault != "" {
		if err := mockapp.NewClient(app.URL(), nil).Arm(t.Context(), r.fault, 1, r.after); err != nil {
			t.Fatalf("arm %s: %v", r.fault, err)
		}
	}
	sess, err := br.NewSession(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	rec, err := replay.Run(t.Context(), replay.Options{Capability: l, Library: lib, Inputs: r.inputs, BaseURL: app.URL(),
		Surface: sess, Secrets: memberDeskSecrets{}, Redactor: redact.New(), DataDir: t.TempDir(), RunID: id})
	if err != nil {
		t.Fatalf("%s: replay: %v", id, err)
	}
	code := string(rec.FailureCode)
	if rec.Status == domain.StatusBusinessOutcome {
		code = rec.Outcome
	}
	if string(rec.Status) != r.status || r.code != "" && code != r.code {
		t.Errorf("%s (inputs %v, fault %q): %s %s (%s); want %s %s", id, r.inputs, r.fault, rec.Status, code, rec.Message, r.status, r.code)
	}
	for k, v := range r.outputs {
		if got := fmt.Sprint(rec.Outputs[k]); got != v {
			t.Errorf("%s: output %s = %q, want %q (outputs %v)", id, k, got, v, rec.Outputs)
		}
	}
}

// checkVerbatim holds a complete capability without a replay mark to the
// example file it reproduces.
func checkVerbatim(t *testing.T, e docExample) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) == e.text {
			return
		}
	}
	t.Errorf("%s:%d: a complete capability must start with \"# replayed: TestDocsExamples/NAME\" or reproduce a file of %s verbatim", docsPage, e.line, examplesDir)
}

// docBase is the capability fragments are spliced into: a draft that
// opens MemberDesk's member search, with the input member_id and a
// checkpoint that checks it.
const docBase = `schema_version: 1
id: docs.fragment
version: 1.0.0
title: A fragment of docs/reference/capability.md
surface: web
entrypoint: {url_pattern: "{base_url}/"}
inputs:
  - {name: member_id, type: string, pattern: "[0-9]{5}", example: "12345"}
steps:
  - id: open_search
    action: click
    target: {role: link, name: Member Search, scope: {frame: nav}}
checkpoint:
  when:
    node_exists: {role: heading, name: "Member {input.member_id}", scope: {frame: content}}
`

// listKeys names the field that identifies an item of each list a
// fragment may splice into.
var listKeys = map[string]string{"inputs": "name", "outputs": "name", "steps": "id", "prerequisites": "capability", "outcomes": "code", "recovery": "id"}

// checkFragment splices a fragment into the base and validates the
// result.
func checkFragment(t *testing.T, e docExample) {
	t.Helper()
	var frag any
	if err := yaml.Unmarshal([]byte(e.text), &frag); err != nil {
		t.Errorf("%s:%d: not YAML: %v", docsPage, e.line, err)
		return
	}
	var base map[string]any
	if err := yaml.Unmarshal([]byte(docBase), &base); err != nil {
		t.Fatal(err)
	}
	switch f := frag.(type) {
	case []any:
		base["steps"] = splice("steps", base["steps"], f)
	case map[string]any:
		for k, v := range f {
			if k == "steps" {
				base[k] = v
				continue
			}
			base[k] = splice(k, base[k], v)
		}
	default:
		t.Errorf("%s:%d: a fragment is a map of capability fields or a list of steps, got %T", docsPage, e.line, frag)
		return
	}
	raiseRisk(base)
	src, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Parse(fmt.Sprintf("%s:%d", docsPage, e.line), src); err != nil {
		t.Errorf("%s:%d: the fragment does not validate spliced into the base capability: %v\n%s", docsPage, e.line, err, e.text)
	}
}

// splice merges a fragment's value of field k into the base's: list items
// by their identifying field, map keys one by one.
func splice(k string, base, frag any) any {
	if fm, ok := frag.(map[string]any); ok {
		bm, _ := base.(map[string]any)
		out := maps.Clone(bm)
		if out == nil {
			out = map[string]any{}
		}
		maps.Copy(out, fm)
		return out
	}
	id, isList := listKeys[k]
	items, ok := frag.([]any)
	if !isList || !ok {
		return frag
	}
	out, _ := base.([]any)
	out = slices.Clone(out)
	for _, it := range items {
		key := keyOf(it, id)
		i := slices.IndexFunc(out, func(b any) bool { return key != "" && keyOf(b, id) == key })
		if i >= 0 {
			out[i] = it
		} else {
			out = append(out, it)
		}
	}
	return out
}

func keyOf(item any, field string) string {
	if m, ok := item.(map[string]any); ok {
		s, _ := m[field].(string)
		return s
	}
	return ""
}

// raiseRisk sets the capability's risk to its riskiest step's (steps
// nested in a step included), as a file holding the fragment's steps would
// declare it.
func raiseRisk(c map[string]any) {
	rank := map[string]int{"safe": 0, "elevated": 1, "irreversible": 2}
	top, _ := c["risk"].(string)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			if r, ok := v["risk"].(string); ok && rank[r] > rank[top] {
				top = r
			}
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(c["steps"])
	if top != "" {
		c["risk"] = top
	}
}
