package codegen_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/codegen"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/browser"
)

// TestLoopRendered: a for_each step is rendered as a for loop over the
// case's list input, one test step per iteration and inner step named as
// a replay records it, {item} read from the element, and a list output
// collecting one value per iteration.
func TestLoopRendered(t *testing.T) {
	t.Parallel()
	l := mustLoad(t, "../capability/testdata/loop/checklist.yaml")
	fe := l.Capability.Step("qty_each").ForEach
	fe.Steps = append(fe.Steps, domain.Step{ID: "open", Action: domain.ActNavigate, URL: "{base_url}/rows/{row.name}?m={input.items}"})
	spec, err := codegen.Generate(l, codegen.Options{Cases: []codegen.Case{{Name: "two", Inputs: map[string]string{"items": `["Alpha","Beta"]`}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(spec)
	for _, want := range []string{
		`for (const [n, item] of (JSON.parse(input(c, "items")) as any[]).entries()) {`,
		`await test.step("tick_each[" + n + "].tick", async () => {`,
		`getByRole("checkbox", { name: String(item), exact: true })`,
		`"Quantity of " + String(item["name"])`,
		`.fill(String(item["qty"]))`,
		`(lists["statuses"] ??= []).push(`,
		`for (const v of lists["statuses"] ?? []) {`,
		`page.goto(BASE_URL + "/rows/" + encodeURIComponent(String(item["name"])) + "?m=" + encodeURIComponent(input(c, "items")))`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("spec lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("spec body:\n%s", s[strings.Index(s, "for (const c of CASES)"):])
	}
}

// TestLoopSpecRunsGreen runs the generated spec of a checklist capability
// with real Playwright against a checklist page: it ticks exactly the
// named items (the page's third item is left alone).
func TestLoopSpecRunsGreen(t *testing.T) {
	var mu sync.Mutex
	var ticks []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/tick":
			ticks = append(ticks, r.URL.Query().Get("name"))
			w.WriteHeader(http.StatusNoContent)
		case "/":
			var b strings.Builder
			b.WriteString(`<!doctype html><html><head><title>Checklist</title></head><body><h1>Checklist</h1><ul>`)
			for i, n := range []string{"Alpha", "Beta", "Gamma (2%)"} {
				fmt.Fprintf(&b, `<li><input type="checkbox" id="c%d" data-name=%q onchange="tick(this)"><label for="c%d">%s</label> <span id="s%d">%s: pending</span></li>`, i, n, i, n, i, n)
			}
			b.WriteString(`</ul><script>function tick(box) { fetch('/tick?name=' + encodeURIComponent(box.dataset.name)).then(function () {
  document.getElementById('s' + box.id.slice(1)).textContent = box.dataset.name + ': done'; }); }</script></body></html>`)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = fmt.Fprint(w, b.String())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	l := mustLoad(t, "testdata/loop.yaml")
	spec, err := codegen.Generate(l, codegen.Options{BrowserArgs: browser.Flags(), Cases: []codegen.Case{
		{Name: "named", Inputs: map[string]string{"items": `["Alpha","Gamma (2%)"]`}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, "loop.spec.ts", spec)
	rep := runPlaywright(t, map[string][]byte{"loop.spec.ts": spec}, map[string]string{"checklist": srv.URL}, nil)
	if rep.Stats.Expected != 1 {
		t.Fatalf("stats %+v, want the case green", rep.Stats)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(ticks, []string{"Alpha", "Gamma (2%)"}) {
		t.Errorf("the page saw ticks %q, want Alpha and Gamma (2%%) only", ticks)
	}
}
