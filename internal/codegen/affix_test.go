package codegen_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/codegen"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/browser"
)

// TestStartsWithEndsWithRendered: a starts_with/ends_with name becomes a
// RegExp with a lookahead for the start, so the start and the end may
// overlap in the generated spec as in targeting ("Search" starts with
// "Sear" and ends with "arch"); inputs are escaped when the spec runs. A
// normalized pair has no locator and is refused naming the step.
func TestStartsWithEndsWithRendered(t *testing.T) {
	t.Parallel()
	l := edit(t, func(c *domain.Capability) {
		c.Steps[2].Target.Name = &domain.NameMatch{StartsWith: "Sear", EndsWith: "arch", Match: domain.MatchExact}
		c.Checkpoint.When.AllOf[1].NodeExists.Name = &domain.NameMatch{StartsWith: "Member {input.member_id}", Match: domain.MatchExact}
	})
	spec, err := codegen.Generate(l, codegen.Options{FrameTitles: codegen.MemberDeskFrames, Library: exampleLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`getByRole("button", { name: new RegExp("^(?=" + reEscape("Sear") + ")[\\s\\S]*" + reEscape("arch") + "\u0024") })`,
		`name: new RegExp("^(?=" + reEscape("Member " + input(c, "member_id")) + ")[\\s\\S]*" + "\u0024") }`,
	} {
		if !strings.Contains(string(spec), want) {
			t.Errorf("spec lacks %s:\n%s", want, spec)
		}
	}
	l = edit(t, func(c *domain.Capability) {
		c.Steps[2].Target.Name = &domain.NameMatch{StartsWith: "Sear", Match: domain.MatchNormalized}
	})
	if _, err := codegen.Generate(l, codegen.Options{FrameTitles: codegen.MemberDeskFrames, Library: exampleLibrary(t)}); err == nil || !strings.Contains(err.Error(), "normalized starts_with/ends_with has no locator") {
		t.Errorf("a normalized pair rendered: %v", err)
	}
}

// affixPage has three payees whose names start and end alike, and a card
// whose name carries its label; a click shows which payee was picked.
const affixPage = `<!doctype html><html><head><title>Payees</title></head><body>
<button onclick="pick(this)">ABC</button> <button onclick="pick(this)">ABA</button> <button onclick="pick(this)">CBA</button>
<p id="picked">nothing picked</p><p>Name: Jane Roe</p>
<script>function pick(b) { fetch('/pick?name=' + encodeURIComponent(b.textContent));
  document.getElementById('picked').textContent = 'picked ' + b.textContent; }</script></body></html>`

// affixCap picks the payee that starts with {input.first} and ends with
// {input.last} and reads the card's name with a regex name and a regex
// transform.
const affixCap = `schema_version: 1
id: test.payee_pair
version: 1.0.0
title: Pick the payee named by a start and an end
surface: web
entrypoint: {url_pattern: "{base_url}/"}
inputs:
  - {name: first, type: string, example: AB}
  - {name: last, type: string, example: BA}
outputs:
  - name: holder
    type: string
    pattern: Jane Roe
    source: {step: read_holder}
steps:
  - id: pick
    action: click
    target: {role: button, name: {starts_with: "{input.first}", ends_with: "{input.last}"}}
    postcondition:
      text_present: "picked "
  - id: read_holder
    action: extract
    target: {role: text, name: {value: "^Name:", match: regex}}
    into: holder
    transform: {regex: "Name: (.+)"}
checkpoint:
  when:
    node_exists: {role: text, name: {starts_with: "picked {input.first}", ends_with: "{input.last}"}}
`

// TestStartsWithEndsWithSpecRunsGreen runs the generated spec of affixCap
// with real Playwright and Chromium: the lookahead RegExp picks "ABA" for
// AB and BA (the page sees that click and no other), and the extract reads
// "Jane Roe" through the regex transform, not the name's narrower match.
func TestStartsWithEndsWithSpecRunsGreen(t *testing.T) {
	var mu sync.Mutex
	var picks []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/pick":
			picks = append(picks, r.URL.Query().Get("name"))
			w.WriteHeader(http.StatusNoContent)
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = fmt.Fprint(w, affixPage)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	l, err := capability.Parse("payee_pair.yaml", []byte(affixCap))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := codegen.Generate(l, codegen.Options{BrowserArgs: browser.Flags(), Cases: []codegen.Case{
		{Name: "overlap", Inputs: map[string]string{"first": "AB", "last": "BA"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, "payee_pair.spec.ts", spec)
	rep := runPlaywright(t, map[string][]byte{"payee_pair.spec.ts": spec}, map[string]string{"payees": srv.URL}, nil)
	if rep.Stats.Expected != 1 {
		t.Fatalf("stats %+v, want the case green", rep.Stats)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(picks, []string{"ABA"}) {
		t.Errorf("the page saw picks %q, want ABA only", picks)
	}
}
