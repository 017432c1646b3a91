package replay_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// sometimesNotice shows a notice to dismiss before the account, one time
// in three (the first of every three loads).
func sometimesNotice(n int32) string {
	notice := ""
	if n%3 == 1 {
		notice = `<section id="notice" aria-label="Notice"><p>Please confirm your mailing address</p>
<button onclick="document.getElementById('notice').remove(); document.getElementById('account').hidden = false">Dismiss</button></section>`
	}
	hidden := ""
	if notice != "" {
		hidden = " hidden"
	}
	return `<!doctype html><html><head><title>Account</title></head><body><h1>Account</h1>` + notice +
		`<div id="account"` + hidden + `><p>Available balance</p><p>42.00</p><button>Refresh</button></div></body></html>`
}

// optionalNotice dismisses the notice only when it is there.
func optionalNotice(when bool) string {
	w := ""
	if when {
		w = "    when:\n      node_exists: {role: button, name: Dismiss}\n"
	}
	return `schema_version: 1
id: test.optional_notice
version: 1.0.0
title: Read the balance past a notice that sometimes shows
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: safe
outputs:
  - name: balance
    type: string
    source: {step: read_balance}
identity: {unarmed: the page shows one account}
steps:
  - id: dismiss_notice
    action: click
    target: {role: button, name: Dismiss}
` + w + `    postcondition:
      node_absent: {role: button, name: Dismiss}
  - id: read_balance
    action: extract
    target: {role: text, name: {value: "^[0-9]+\\.[0-9]{2}$", match: regex}}
    into: balance
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 5
  max_duration_ms: 20000
`
}

// TestOptionalStepOnChromium (issue 24 item 3): a step with when runs
// only when its predicate holds on the screen the previous step left and
// is otherwise skipped and recorded; the same capability without when
// halts on the loads that show no notice.
func TestOptionalStepOnChromium(t *testing.T) {
	var loads atomic.Int32
	w := newPageWorld(t, func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(rw, r)
			return
		}
		staticPage(sometimesNotice(loads.Add(1)))(rw, r)
	})
	run := func(t *testing.T, yaml string, n int) *domain.RunRecord {
		t.Helper()
		rec, _ := w.run(t, yaml, fmt.Sprintf("optional-%d", n))
		return rec
	}
	loads.Store(0)
	var skipped int
	for n := range 3 {
		rec := run(t, optionalNotice(true), n)
		if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["balance"]) != "42.00" {
			t.Fatalf("run %d: %s (%s: %s), outputs %v; want SUCCESS 42.00", n, rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
		}
		if rec.Steps[0].Status == "skipped" {
			skipped++
		}
	}
	if skipped != 2 {
		t.Errorf("the notice step was skipped in %d of 3 runs, want 2 (it shows one time in three)", skipped)
	}
	loads.Store(1) // the next load shows no notice
	if rec := run(t, optionalNotice(false), 9); rec.Status == domain.StatusSuccess || !strings.Contains(rec.Message, "Dismiss") {
		t.Errorf("without when, a load with no notice: %s (%s); want a halt naming Dismiss", rec.Status, rec.Message)
	}
}
