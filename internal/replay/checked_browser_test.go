package replay_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// preferencesPage is a form whose choices only their checked state tells
// apart: every checkbox and radio has the value "on" (what node_has_value
// reads), and the "Paper" option is selected until the caller picks another.
const preferencesPage = `<!doctype html><html><head><title>Preferences</title></head><body>
<h1>Statement preferences</h1>
<form onsubmit="event.preventDefault(); document.getElementById('done').hidden = false">
<label><input type="checkbox" name="email"> Email statements</label>
<label><input type="checkbox" name="sms" checked> Text alerts</label>
<fieldset><legend>Frequency</legend>
<label><input type="radio" name="freq"> Monthly</label>
<label><input type="radio" name="freq" checked> Quarterly</label></fieldset>
<label>Delivery <select><option>Paper</option><option>Online</option></select></label>
<button>Save</button></form>
<p id="done" hidden>Preferences saved</p>
</body></html>`

// preferencesCapability ticks "Email statements", picks Monthly and saves;
// it proves each choice by its checked state before Save (the step Save
// needs all three to hold), and after (the outcome).
func preferencesCapability(postcondition string) string {
	return `schema_version: 1
id: test.statement_preferences
version: 1.0.0
title: Email statements, monthly
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: elevated
steps:
  - id: tick_email
    action: click
    target: {role: checkbox, name: Email statements}
` + postcondition + `
  - id: monthly
    action: click
    target: {role: radio, name: Monthly}
    postcondition:
      node_checked: {role: radio, name: Monthly}
  - id: save
    action: click
    target: {role: button, name: Save}
    risk: elevated
    precondition:
      all_of:
        - node_checked: {role: checkbox, name: Email statements}
        - node_unchecked: {role: radio, name: Quarterly}
        - node_selected: {role: option, name: Paper}
    postcondition:
      text_present: {text: Preferences saved}
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 10
  max_duration_ms: 20000
`
}

// TestCheckedStateOnChromium (issue 24 item 2): node_checked,
// node_unchecked and node_selected read the accessibility state Chromium
// reports, so a capability proves a choice before Submit. The same
// capability whose first click is taken back by a second (an untick)
// halts at that step, where node_has_value, which reads "on" either way,
// could not tell.
func TestCheckedStateOnChromium(t *testing.T) {
	w := newPageWorld(t, staticPage(preferencesPage))
	tests := []struct {
		name, post string
		status     domain.RunStatus
		failedAt   string
	}{
		{"checked after the click", "    postcondition:\n      node_checked: {role: checkbox, name: Email statements}", domain.StatusSuccess, ""},
		{"still unchecked is refuted", "    postcondition:\n      node_unchecked: {role: checkbox, name: Email statements}", domain.StatusFailed, "tick_email"},
		{"a ticked box is not unchecked", "    postcondition:\n      node_unchecked: {role: checkbox, name: Text alerts}", domain.StatusFailed, "tick_email"},
		// Issue 24 item 8: a step id ending like a credential label is not
		// one; the record's message keeps the code and reason after it.
		{"a step id is not a label", "    postcondition:\n      node_checked: {role: checkbox, name: Email statements}", domain.StatusFailed, "enter_password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := preferencesCapability(tt.post)
			if tt.failedAt == "enter_password" {
				// Typing into a heading fails at dispatch: "step
				// enter_password: dispatch type: …".
				yaml = strings.Replace(yaml, "id: tick_email\n    action: click\n    target: {role: checkbox, name: Email statements}",
					"id: enter_password\n    action: type\n    value: hunter2\n    target: {role: heading, name: Statement preferences}", 1)
			}
			rec, _ := w.run(t, yaml, "prefs")
			if rec.Status != tt.status {
				t.Fatalf("status %s (%s: %s), want %s", rec.Status, rec.FailureCode, rec.Message, tt.status)
			}
			if tt.failedAt != "" {
				last := rec.Steps[len(rec.Steps)-1]
				if last.ID != tt.failedAt || last.Failure == "" {
					t.Errorf("last step %s %s (%s), want %s failed", last.ID, last.Status, last.Failure, tt.failedAt)
				}
				if strings.Contains(rec.Message, "REDACTED") || !strings.Contains(rec.Message, tt.failedAt) {
					t.Errorf("message %q: want the step id and what follows it unredacted", rec.Message)
				}
			}
		})
	}
}
