package recorder

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// TestScreenInSomeRunsBecomesOptional compiles a run that dismissed a
// notice, given two other runs of which one never saw it: the dismissal
// becomes a when: step, the steps every run took stay unconditional, and
// a typed member number (another value in each run) is still matched.
func TestScreenInSomeRunsBecomesOptional(t *testing.T) {
	t.Parallel()
	run := func(member string, notice bool) *domain.Trace {
		steps := []domain.TraceStep{clickStep("link", "Member Search")}
		if notice {
			steps = append(steps, clickStep("button", "Dismiss"))
		}
		steps = append(steps, typeStep("Member number", member), clickStep("button", "Search"))
		submit := clickStep("button", "Approve")
		submit.Action.Risk = domain.RiskElevated
		if member == "12345" {
			steps = append(steps, submit) // elevated, and in this run only
		}
		return traceOf("look up member "+member, steps...)
	}
	opts := testOptions()
	opts.Others = []*domain.Trace{run("67890", false), run("24680", true)}
	res, data := mustCompile(t, run("12345", true), opts)
	c := res.Capability
	dismiss := c.Step("click_dismiss")
	if dismiss == nil || dismiss.When == nil || dismiss.When.NodeExists == nil || dismiss.When.NodeExists.Name.Value != "Dismiss" {
		t.Fatalf("click_dismiss is not optional:\n%s", data)
	}
	for _, s := range c.Steps {
		if s.ID != "click_dismiss" && s.When != nil {
			t.Errorf("step %s was made optional", s.ID)
		}
	}
	if !hasNote(res.Notes, "step click_dismiss does not appear in 1 of the 2 other runs", "optional") ||
		!hasNote(res.Notes, "step click_approve is elevated and does not appear in 2 of the 2 other runs", "not made optional") {
		t.Errorf("notes = %s", strings.Join(res.Notes, "\n"))
	}
	if !bytes.Contains(data, []byte("    when:\n      node_exists: {role: button, name: Dismiss, scope: {frame: content}}\n")) {
		t.Errorf("the when is not written:\n%s", data)
	}
	// Without other runs nothing is optional.
	alone, _ := mustCompile(t, run("12345", true), testOptions())
	if s := alone.Capability.Step("click_dismiss"); s == nil || s.When != nil {
		t.Errorf("without other runs: %+v", s)
	}
}
