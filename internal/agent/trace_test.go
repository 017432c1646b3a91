package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/sim"
	"github.com/cuahq/cua/internal/targeting"
)

// TestFailedDispatchIsSkipped: an action the application fails is a
// skipped step with a notice the model reads next turn, one rung up the
// ladder, not a fatal error: the run goes on and finishes.
func TestFailedDispatchIsSkipped(t *testing.T) {
	t.Parallel()
	b := setup(t,
		reply(typeText(2, "555-0100", "")),
		reply(click(3)),
		reply(clickExpecting(3, "Saved")),
		reply(finish(1, "The profile is saved")),
		reply(audit("confirmed", "the Saved heading is shown")),
	)
	f := sim.NewFlow(base,
		sim.Screen{Name: "form", Title: "Profile", Nodes: []sim.Node{
			{Role: "heading", Name: "Profile"},
			{Role: "textbox", Name: "Phone"},
			{Role: "button", Name: "Save"},
		}},
		sim.Screen{Name: "saved", Title: "Saved", Nodes: []sim.Node{
			{Role: "heading", Name: "Saved"},
			{Role: "text", Name: "Your profile was saved"},
			{Role: "button", Name: "Edit"},
		}},
	)
	f.On("button", "Save",
		sim.Nth(1, sim.Fail("backend timeout")),
		sim.From(2, sim.Goto("saved")))
	res := b.run(t, b.config(sim.New(f), "Set the profile phone to 555-0100"))

	if res.Status != agent.StatusFinished {
		t.Fatalf("Status = %s (%q), want finished: one failed dispatch is not fatal", res.Status, res.Reason)
	}
	if got, want := b.progress.verdicts(), []string{"ok", "skipped", "ok", "finished"}; !slices.Equal(got, want) {
		t.Errorf("verdicts = %q, want %q", got, want)
	}
	rep := b.progress.reports()[1]
	if !strings.HasPrefix(rep.Notice, "the action could not be performed: ") || !strings.Contains(rep.Notice, "backend timeout") {
		t.Errorf("skipped step notice = %q, want the app's error", rep.Notice)
	}
	if txt := b.userText(t, 2); !strings.Contains(txt, "Notice: the action could not be performed: ") ||
		!strings.Contains(txt, "backend timeout") || !strings.Contains(txt, `2. click button "Save" → skipped`) {
		t.Errorf("the request after the failed click lacks its notice and history:\n%s", txt)
	}
	if n := f.Count("button", "Save"); n != 2 {
		t.Errorf("Save reached the app %d times, want 2", n)
	}
	if st := res.Trace.Steps[2]; st.Verdict != "skipped" || st.Action.Type != domain.ActClick {
		t.Errorf("trace step 2 = %s %s, want a skipped click", st.Action.Type, st.Verdict)
	}
}

// TestTrace: a short successful exploration (type a goal literal naming
// its input, click, extract, finish) leaves the trace the recorder needs:
// every step with its descriptor and verdict, the input map, the new
// heading as a postcondition, an extract target anchored to its row label
// (so it finds another member's balance), and the audited checkpoint.
func TestTrace(t *testing.T) {
	t.Parallel()
	b := setup(t,
		reply(typeText(2, "10042", "member_id")),
		reply(clickExpecting(3, "Member Details")),
		reply(extract(5, "savings_balance")),
		reply(finish(1, "The savings balance of member 10042 is $1,234.56")),
		reply(audit("confirmed", "the details page shows the balance")),
	)
	f := lookupApp("$1,234.56")
	cfg := b.config(sim.New(f), "Find the savings balance of member 10042")
	cfg.DataDir = t.TempDir()
	res := b.run(t, cfg)

	if res.Status != agent.StatusFinished {
		t.Fatalf("Status = %s (%q), want finished", res.Status, res.Reason)
	}
	if res.Steps != 4 || res.Tokens != 5*usage.Total() {
		t.Errorf("Steps, Tokens = %d, %d; want 4, %d", res.Steps, res.Tokens, 5*usage.Total())
	}
	if got, want := b.progress.verdicts(), []string{"ok", "ok", "extracted", "finished"}; !slices.Equal(got, want) {
		t.Errorf("verdicts = %q, want %q", got, want)
	}
	if got := res.Outputs["savings_balance"]; got != "$1,234.56" || len(res.Outputs) != 1 {
		t.Errorf("Outputs = %q, want savings_balance = $1,234.56", res.Outputs)
	}

	tr := res.Trace
	if tr.Goal != cfg.Goal || tr.BaseURL != base || tr.Model != "openai:test-model" || tr.RunID != runID ||
		tr.Surface != domain.SurfaceWeb || tr.Tokens != res.Tokens || !tr.Finished {
		t.Errorf("trace header = goal %q base %q model %q run %q surface %q tokens %d finished %v",
			tr.Goal, tr.BaseURL, tr.Model, tr.RunID, tr.Surface, tr.Tokens, tr.Finished)
	}
	if len(tr.Inputs) != 1 || tr.Inputs["10042"] != "member_id" {
		t.Errorf("Inputs = %v, want 10042 → member_id", tr.Inputs)
	}
	if len(tr.Steps) != 4 {
		t.Fatalf("trace has %d steps, want 4 (start, type, click, extract): %+v", len(tr.Steps), tr.Steps)
	}

	start, typed, clicked, read := tr.Steps[0], tr.Steps[1], tr.Steps[2], tr.Steps[3]
	if start.Action.Type != domain.ActNavigate || start.Action.URL != base+"/" || start.Verdict != "ok" {
		t.Errorf("step 0 = %+v, want the opening navigation", start)
	}
	if typed.Action.Type != domain.ActType || typed.Literal != "10042" || typed.Verdict != "ok" ||
		!named(typed.Target, "textbox", "Member number") || typed.Node == nil || typed.Index != 1 {
		t.Errorf("step 1 = %s %q %s on %+v, want an ok type of 10042 into textbox Member number",
			typed.Action.Type, typed.Literal, typed.Verdict, typed.Target)
	}
	if clicked.Action.Type != domain.ActClick || clicked.Verdict != "ok" || !named(clicked.Target, "button", "Search") ||
		!strings.HasSuffix(clicked.URLBefore, "/search") {
		t.Errorf("step 2 = %s %s on %+v from %s, want an ok click on Search", clicked.Action.Type, clicked.Verdict, clicked.Target, clicked.URLBefore)
	}
	if p := clicked.Postcondition; p == nil || !named(p.NodeExists, "heading", "Member Details") {
		t.Errorf("step 2 postcondition = %+v, want the new heading Member Details", p)
	}
	if read.Action.Type != domain.ActExtract || read.Into != "savings_balance" || read.Extracted != "$1,234.56" || read.Verdict != "ok" {
		t.Errorf("step 3 = %s into %q = %q (%s), want the extract", read.Action.Type, read.Into, read.Extracted, read.Verdict)
	}
	d := read.Target
	if d == nil || d.Name != nil || d.Anchor == nil || d.Anchor.Relation != domain.RelRowOf || d.Anchor.Text != "Savings Balance" {
		t.Fatalf("extract target = %+v, want a nameless row_of \"Savings Balance\" anchor", d)
	}
	// Value independent: the same descriptor reads another member's balance.
	other := snapshotOf(t, lookupApp("$98.76"), "details")
	r, err := targeting.Resolve(other, *d)
	if err != nil {
		t.Fatalf("the extract target does not resolve on another record: %v", err)
	}
	if got := targeting.ExtractText(other, r); got != "$98.76" {
		t.Errorf("the extract target reads %q on another record, want $98.76", got)
	}

	cp := tr.Checkpoint
	if cp == nil || !named(cp.NodeExists, "heading", "Member Details") {
		t.Errorf("Checkpoint = %+v, want node_exists heading Member Details", cp)
	}

	// Every step is in the run's evidence with its tokens.
	steps := string(evidenceFiles(t, cfg.DataDir)["runs/"+runID+"/steps.jsonl"])
	if n := strings.Count(steps, "\n"); n != 4 {
		t.Errorf("steps.jsonl has %d lines, want 4:\n%s", n, steps)
	}
	for _, want := range []string{`"verdict":"extracted"`, `"input_tokens":100`, `"tokens_total":600`} {
		if !strings.Contains(steps, want) {
			t.Errorf("steps.jsonl lacks %s:\n%s", want, steps)
		}
	}
}

// named reports whether d is a role + exact name descriptor.
func named(d *domain.TargetDescriptor, role, name string) bool {
	return d != nil && d.Role == role && d.Name != nil && d.Name.Value == name
}

// TestBusinessOutcome: when the application answers the goal with a
// business result, "outcome" ends the run with its code, and the trace
// keeps the text that shows it as the outcome's predicate. An outcome
// without the element that shows it is refused.
func TestBusinessOutcome(t *testing.T) {
	t.Parallel()
	outcome := func(el *int) string {
		return turnJSON(agent.Turn{Action: agent.KindOutcome, Element: el, Code: ptr("member_not_found")})
	}
	b := setup(t,
		reply(typeText(2, "99999", "member_id")),
		reply(click(3)),
		reply(outcome(nil)),
		reply(outcome(ptr(2))),
	)
	f := sim.NewFlow(base,
		sim.Screen{Name: "search", Title: "Member Search", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Search"},
			{Role: "textbox", Name: "Member number"},
			{Role: "button", Name: "Search"},
		}},
		sim.Screen{Name: "notfound", Title: "Member Search", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Search"},
			{Role: "text", Name: "Member not found"},
			{Role: "button", Name: "New search"},
		}},
	)
	f.On("button", "Search", sim.Goto("notfound"))
	res := b.run(t, b.config(sim.New(f), "Find the savings balance of member 99999"))

	if res.Status != agent.StatusOutcome || res.Reason != "member_not_found" {
		t.Fatalf("Status, Reason = %s, %q; want outcome, member_not_found", res.Status, res.Reason)
	}
	if got, want := b.progress.verdicts(), []string{"ok", "ok", "refused", "outcome member_not_found"}; !slices.Equal(got, want) {
		t.Errorf("verdicts = %q, want %q", got, want)
	}
	o := res.Trace.Outcome
	if o == nil || o.Code != "member_not_found" || o.When.TextPresent == nil || o.When.TextPresent.Text != "Member not found" {
		t.Errorf("trace outcome = %+v, want member_not_found when \"Member not found\" is present", o)
	}
	if res.Trace.Finished || res.Trace.Checkpoint != nil {
		t.Error("a business outcome is not a finished goal")
	}
	if !strings.Contains(b.userText(t, 3), "Notice: an outcome needs the element that shows it") {
		t.Error("the refused outcome's notice did not reach the model")
	}
}
