package recorder

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// approveRow is the click that approves the row of item, and the
// extraction of its reference.
func approveRow(item, into string, n int) []domain.TraceStep {
	click := clickStep("button", "Approve")
	click.Target.Anchor = &domain.Anchor{Relation: domain.RelRowOf, Text: item}
	click.Target.RecordedStrategy = domain.StrategyStructuralAnchor
	click.Action.Risk = domain.RiskElevated
	click.Postcondition = &domain.Predicate{TextPresent: &domain.TextQuery{Text: "Approved: " + item + " (", Frame: "content"}}
	return []domain.TraceStep{click, extractStep(item, into, fmt.Sprintf("APV-%04d", n))}
}

// TestRepeatedRowActionBecomesLoop compiles a trace that approves three
// rows alike into one for_each loop over a new list input, with one array
// output, and checks the written file loads back (mustCompile).
func TestRepeatedRowActionBecomesLoop(t *testing.T) {
	t.Parallel()
	steps := []domain.TraceStep{clickStep("link", "Pending Approvals")}
	for i, item := range []string{"Laptop repair", "Conference travel", "Office chairs"} {
		into := "reference"
		if i > 0 {
			into = fmt.Sprintf("reference_%d", i+1)
		}
		steps = append(steps, approveRow(item, into, i+1)...)
	}
	steps = append(steps, clickStep("button", "Done"))
	res, data := mustCompile(t, traceOf("approve the pending items", steps...), testOptions())
	c := res.Capability
	if got := strings.Join(stepIDs(c), " "); got != "click_pending_approvals approve_each click_done" {
		t.Fatalf("steps = %s\n%s", got, data)
	}
	loop := c.Steps[1].ForEach
	if loop == nil || loop.Input != "rows" || loop.As != "item" || len(loop.Steps) != 2 {
		t.Fatalf("loop = %+v", loop)
	}
	if a := loop.Steps[0].Target.Anchor; a.Text != "{item}" || loop.Steps[0].Postcondition.TextPresent.Text != "Approved: {item} (" {
		t.Errorf("inner click not bound to the row: anchor %q, postcondition %+v", a.Text, loop.Steps[0].Postcondition.TextPresent)
	}
	in := c.Input("rows")
	if in == nil || in.Type != domain.TypeArray || in.Items == nil || in.Items.Type != domain.TypeString || in.MaxItems == nil || *in.MaxItems != 10 {
		t.Fatalf("list input = %+v", in)
	}
	if in.Example != `["Laptop repair","Conference travel","Office chairs"]` {
		t.Errorf("example = %v", in.Example)
	}
	if len(c.Outputs) != 1 || c.Outputs[0].Name != "reference" || c.Outputs[0].Type != domain.TypeArray ||
		c.Outputs[0].Source.Step != "approve_each.extract_item" || loop.Steps[1].ID != "extract_item" {
		t.Errorf("outputs = %+v", c.Outputs)
	}
	if c.Risk != domain.RiskElevated || c.Policy.MaxSteps < 3*c.StepCount() {
		t.Errorf("risk %s, max_steps %d for %d steps", c.Risk, c.Policy.MaxSteps, c.StepCount())
	}
	if !hasNote(res.Notes, "folded into loop approve_each over list input rows", "Laptop repair, Conference travel, Office chairs") {
		t.Errorf("notes = %s", strings.Join(res.Notes, "\n"))
	}
	if !bytes.Contains(data, []byte("for_each:\n      input: rows\n      as: item\n")) {
		t.Errorf("the loop is not written:\n%s", data)
	}
}

// TestRowsActedOnDifferentlyStayApart leaves steps alone when the rows are
// not acted on alike (one row's reference is not read), or the same row
// repeats.
func TestRowsActedOnDifferentlyStayApart(t *testing.T) {
	t.Parallel()
	steps := append(approveRow("Laptop repair", "reference", 1), approveRow("Conference travel", "x", 2)[0])
	steps = append(steps, clickStep("button", "Done"), approveRow("Office chairs", "y", 3)[0], approveRow("Office chairs", "y", 3)[0])
	res, data := mustCompile(t, traceOf("approve", steps...), testOptions())
	for _, s := range res.Capability.Steps {
		if s.ForEach != nil {
			t.Fatalf("step %s was folded into a loop:\n%s", s.ID, data)
		}
	}
	if len(res.Capability.Steps) != 6 || hasNote(res.Notes, "folded into loop") {
		t.Errorf("steps = %v, notes = %s", stepIDs(res.Capability), strings.Join(res.Notes, "\n"))
	}
}
