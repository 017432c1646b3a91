package replay_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/replay"
)

// focusFinishesPage scores the task the moment its field is focused and
// takes the focus away again, as a page's focus handler may: the focus
// dispatch then fails ("focus did not stay") although the task is done.
const focusFinishesPage = `<!doctype html><html><head><title>Focus task</title></head><body>
<h1>Focus task</h1>
<label>Code <input id="code" onfocus="document.getElementById('won').hidden = false; this.blur()"></label>
<p id="won" hidden>Task complete</p>
</body></html>`

func focusCapability(post string) string {
	return `schema_version: 1
id: test.focus_finishes
version: 1.0.0
title: Focus the code field
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: safe
steps:
  - id: focus_code
    action: focus
    target: {role: textbox, name: Code}
    postcondition:
      text_present: {text: "` + post + `"}
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 5
  max_duration_ms: 20000
`
}

// TestFailedDispatchPostconditionHolds (issue 24 item 1): after a failed
// dispatch the engine judges the step's postcondition; when it already
// holds the step's intent is met and the run goes on (recorded as a
// dispatch explained by "postcondition held"). When it does not hold, the
// dispatch failure still ends the run, naming it.
func TestFailedDispatchPostconditionHolds(t *testing.T) {
	w := newPageWorld(t, staticPage(focusFinishesPage))
	for _, tt := range []struct {
		post   string
		status domain.RunStatus
	}{{"Task complete", domain.StatusSuccess}, {"Task abandoned", domain.StatusFailed}} {
		t.Run(tt.post, func(t *testing.T) {
			rec, bundle := w.run(t, focusCapability(tt.post), "focus")
			if rec.Status != tt.status {
				t.Fatalf("status %s (%s: %s), want %s", rec.Status, rec.FailureCode, rec.Message, tt.status)
			}
			explained := false
			for _, e := range readEvents(t, bundle) {
				explained = explained || (e.Type == "dispatch_explained" && e.Data["rule"] == replay.PostconditionHeld)
			}
			if explained != (tt.status == domain.StatusSuccess) {
				t.Errorf("dispatch explained by %q: %v, want %v", replay.PostconditionHeld, explained, tt.status == domain.StatusSuccess)
			}
			if tt.status == domain.StatusFailed && !strings.Contains(rec.Message, "focus") {
				t.Errorf("message %q does not name the failed focus", rec.Message)
			}
		})
	}
}
