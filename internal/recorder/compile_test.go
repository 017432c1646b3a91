package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

const savingsGolden = "testdata/memberdesk.savings_balance.golden.yaml"

// TestCompileSavingsBalance compiles the hand-written trace of the
// savings-balance lookup on the mock app and checks the YAML against the
// golden, then that it loads, seals and validates as sealed.
func TestCompileSavingsBalance(t *testing.T) {
	t.Parallel()
	res, data := mustCompile(t, loadTrace(t, "savings_balance.trace.json"), savingsOptions(t))
	checkGolden(t, savingsGolden, data)
	c := res.Capability

	if got, want := stepIDs(c), []string{"click_member_search", "type_member_number", "click_search", "extract_status", "extract_savings_balance", "extract_as_of"}; !slices.Equal(got, want) {
		t.Errorf("step ids = %v, want %v", got, want)
	}
	if c.Entrypoint.URLPattern != "{base_url}/" {
		t.Errorf("entrypoint = %q", c.Entrypoint.URLPattern)
	}
	in := c.Input("member_number")
	if in == nil || in.Type != domain.TypeString || in.Pattern != "[0-9]{5}" || in.Example != "12345" || in.Sensitive || len(c.Inputs) != 1 {
		t.Errorf("inputs = %+v", c.Inputs)
	}
	if v := c.Step("type_member_number").Value; v.Kind() != "input" || v.Input != "member_number" {
		t.Errorf("type value = %v", v)
	}
	for name, want := range map[string]domain.ValueType{"status": domain.TypeString, "savings_balance": domain.TypeMoney, "as_of": domain.TypeDate} {
		if o := c.Output(name); o == nil || o.Type != want || c.Step(o.Source.Step).Into != name {
			t.Errorf("output %s = %+v, want type %s", name, o, want)
		}
	}
	if c.Risk != domain.RiskSafe {
		t.Errorf("risk = %s", c.Risk)
	}
	if got := []string{c.Recovery[0].ID, c.Recovery[1].ID}; len(c.Recovery) != 2 || got[0] != "transient_load" || got[1] != "session_expired" {
		t.Errorf("recovery = %+v", c.Recovery)
	}
	if !slices.Equal(c.Policy.AllowedDomains, []string{"127.0.0.1", "localhost"}) || c.Policy.MaxSteps != 18 || c.Policy.MaxDurationMS != 60000 {
		t.Errorf("policy = %+v", c.Policy)
	}
	if p := c.Provenance; p.Source != "discovery" || p.CompiledAt != "2026-11-30T14:30:00Z" || p.Tokens != 18432 || !slices.Equal(p.ReviewNotes, res.Notes) {
		t.Errorf("provenance = %+v", p)
	}
	if !bytes.HasPrefix(data, []byte(SchemaModeline+"\n")) {
		t.Errorf("the file does not start with the schema modeline")
	}
	if !bytes.Contains(data, []byte("\n# Review notes (also in provenance.review_notes):\n#   - ")) {
		t.Errorf("the review notes are not in the header")
	}

	// Seal it and load it back, as `cua capability seal` and every loader do.
	path := filepath.Join(t.TempDir(), "memberdesk.savings_balance.yaml")
	if err := capability.WriteFileAtomic(path, data); err != nil {
		t.Fatal(err)
	}
	hash, err := capability.Seal(path)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatalf("Load sealed: %v", err)
	}
	want, _ := capability.Hash(c)
	if !l.Sealed || l.Hash != hash || hash != want {
		t.Errorf("sealed %v with %s, loaded %s, compiled %s", l.Sealed, hash, l.Hash, want)
	}
	if _, err := capability.BindInputs(l.Capability, map[string]string{"member_number": "23456"}); err != nil {
		t.Errorf("BindInputs: %v", err)
	}
	if _, err := capability.BindInputs(l.Capability, map[string]string{"member_number": "2345"}); err == nil {
		t.Errorf("BindInputs accepted a four-digit member number")
	}
}

// TestCompiledMatchesReference compiles the same trace with the input named
// as in the hand-written reference and compares what replay acts on: every
// step's action, target (without the cached hint), value, extraction and
// postcondition, the outputs, the prerequisite, the recovery conditions and
// the checkpoint.
func TestCompiledMatchesReference(t *testing.T) {
	t.Parallel()
	tr := loadTrace(t, "savings_balance.trace.json")
	tr.Inputs = map[string]string{"12345": "member_id"}
	res, _ := mustCompile(t, tr, savingsOptions(t))
	frozen, err := capability.Load("testdata/savings_balance.reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, ref := res.Capability, frozen.Capability

	if len(got.Steps) != len(ref.Steps) {
		t.Fatalf("%d steps, the reference has %d", len(got.Steps), len(ref.Steps))
	}
	// The reference reads status first too; compare step by step.
	for i := range ref.Steps {
		g, r := got.Steps[i], ref.Steps[i]
		gt, rt := *g.Target, *r.Target
		gt.Hints, rt.Hints = nil, nil
		if g.Action != r.Action || !reflect.DeepEqual(gt, rt) || !reflect.DeepEqual(g.Value, r.Value) ||
			g.Into != r.Into || g.Transform != r.Transform || !reflect.DeepEqual(g.Postcondition, r.Postcondition) ||
			!reflect.DeepEqual(g.Wait, r.Wait) || g.Risk != r.Risk {
			t.Errorf("step %d:\n got %+v\nwant %+v", i, g, r)
		}
	}
	for _, r := range ref.Outputs {
		g := got.Output(r.Name)
		if g == nil || g.Type != r.Type {
			t.Errorf("output %s: got %+v, want type %s", r.Name, g, r.Type)
		}
	}
	if in := got.Input("member_id"); in == nil || in.Pattern != ref.Inputs[0].Pattern || in.Type != ref.Inputs[0].Type {
		t.Errorf("input member_id = %+v", got.Inputs)
	}
	if !reflect.DeepEqual(got.Prerequisites, ref.Prerequisites) {
		t.Errorf("prerequisites = %+v", got.Prerequisites)
	}
	if !reflect.DeepEqual(got.Checkpoint.When, ref.Checkpoint.When) {
		t.Errorf("checkpoint = %+v", got.Checkpoint)
	}
	for i, r := range ref.Recovery {
		g := got.Recovery[i]
		if g.ID != r.ID || !reflect.DeepEqual(g.When, r.When) || g.Remedy != r.Remedy || g.Capability != r.Capability {
			t.Errorf("recovery %d: got %+v, want %+v", i, g, r)
		}
	}
	if !reflect.DeepEqual(got.Escalation, ref.Escalation) || !reflect.DeepEqual(got.Policy.AllowedDomains, ref.Policy.AllowedDomains) ||
		!reflect.DeepEqual(got.Policy.AllowedActions, ref.Policy.AllowedActions) {
		t.Errorf("escalation %+v policy %+v", got.Escalation, got.Policy)
	}
}

// TestDeterministic compiles the same trace (with several mapped inputs,
// so map order would show) many times and wants the same bytes.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	var first []byte
	for i := 0; i < 20; i++ {
		tr := loadTrace(t, "savings_balance.trace.json")
		tr.Inputs = map[string]string{"12345": "member_id", "Checking": "account", "99999": "other", "ABC": "code", "x1": "x_one"}
		_, data := mustCompile(t, tr, savingsOptions(t))
		again, err := Compile(loadTrace(t, "savings_balance.trace.json"), savingsOptions(t))
		if err != nil {
			t.Fatal(err)
		}
		b1, _ := Marshal(again.Capability, again.Notes)
		b2, _ := Marshal(again.Capability, again.Notes)
		if !bytes.Equal(b1, b2) {
			t.Fatal("Marshal of one capability differs between calls")
		}
		if first == nil {
			first = data
			continue
		}
		if !bytes.Equal(first, data) {
			t.Fatalf("compilation %d differs from the first", i)
		}
	}
}

// TestCompileDoesNotModifyTrace checks the trace is read only.
func TestCompileDoesNotModifyTrace(t *testing.T) {
	t.Parallel()
	tr := loadTrace(t, "savings_balance.trace.json")
	before, _ := json.Marshal(tr)
	mustCompile(t, tr, savingsOptions(t))
	after, _ := json.Marshal(tr)
	if !bytes.Equal(before, after) {
		t.Error("Compile modified the trace")
	}
}

func TestLiteralInputs(t *testing.T) {
	t.Parallel()
	password := typeStep("Password", "hunter2")
	password.Node.States.Password = true
	sensitive := typeStep("Tax id", "123-45-6789")
	sensitive.Node.Sensitive = true
	secret := typeStep("Operator ID", "")
	secret.Literal = ""
	secret.Action.Value = &domain.ValueExpr{Secret: "corebank_operator"}
	sel := typeStep("From account", "Checking")
	sel.Action.Type = domain.ActSelect
	sel.Target.Role = "combobox"
	named := typeStep("Member number", "")
	named.Literal = ""
	named.Action.Value = &domain.ValueExpr{Input: "member_id"}

	tests := []struct {
		name      string
		goal      string
		inputs    map[string]string
		step      domain.TraceStep
		wantValue domain.ValueExpr
		wantInput *domain.InputSpec // nil: no input
		wantNote  []string
	}{
		{
			name: "digits", goal: "Look up the savings balance of member 12345", step: typeStep("Member number", "12345"),
			wantValue: domain.ValueExpr{Input: "member_number"},
			wantInput: &domain.InputSpec{Name: "member_number", Type: domain.TypeString, Pattern: "[0-9]{5}", Example: "12345"},
			wantNote:  []string{"input member_number (string, pattern [0-9]{5})", `goal literal "12345"`},
		},
		{
			name: "letters", goal: "Find the member named Smith", step: typeStep("Last name", "Smith"),
			wantValue: domain.ValueExpr{Input: "last_name"},
			wantInput: &domain.InputSpec{Name: "last_name", Type: domain.TypeString, Pattern: "[A-Za-z]{5}", Example: "Smith"},
		},
		{
			name: "mixed shape", goal: "Open case AB-1234.", step: typeStep("Case", "AB-1234"),
			wantValue: domain.ValueExpr{Input: "case"},
			wantInput: &domain.InputSpec{Name: "case", Type: domain.TypeString, Pattern: "[A-Za-z]{2}-[0-9]{4}", Example: "AB-1234"},
		},
		{
			name: "money", goal: "Transfer 25.00 to checking", step: typeStep("Amount", "25.00"),
			wantValue: domain.ValueExpr{Input: "amount"},
			wantInput: &domain.InputSpec{Name: "amount", Type: domain.TypeMoney, Example: "25.00"},
			wantNote:  []string{"input amount (money)"},
		},
		{
			name: "money with symbol and grouping", goal: "Pay $1,500.50 now", step: typeStep("Amount", "$1,500.50"),
			wantValue: domain.ValueExpr{Input: "amount"},
			wantInput: &domain.InputSpec{Name: "amount", Type: domain.TypeMoney, Example: "1500.50"},
			wantNote:  []string{"canonical amount (1500.50)"},
		},
		{
			name: "iso date", goal: "Statements since 2026-11-30", step: typeStep("From date", "2026-11-30"),
			wantValue: domain.ValueExpr{Input: "from_date"},
			wantInput: &domain.InputSpec{Name: "from_date", Type: domain.TypeDate, Example: "2026-11-30"},
		},
		{
			name: "us date stays a string", goal: "Statements since 11/30/2026", step: typeStep("From date", "11/30/2026"),
			wantValue: domain.ValueExpr{Input: "from_date"},
			wantInput: &domain.InputSpec{Name: "from_date", Type: domain.TypeString, Pattern: "[0-9]{2}/[0-9]{2}/[0-9]{4}", Example: "11/30/2026"},
		},
		{
			name: "free text has no pattern", goal: "Find Jane Doe", step: typeStep("Name", "Jane Doe"),
			wantValue: domain.ValueExpr{Input: "name"},
			wantInput: &domain.InputSpec{Name: "name", Type: domain.TypeString, Example: "Jane Doe"},
			wantNote:  []string{"input name (string, no pattern)"},
		},
		{
			name: "name from the trace", goal: "Look up member 12345", inputs: map[string]string{"12345": "member_id"}, step: typeStep("Member number", "12345"),
			wantValue: domain.ValueExpr{Input: "member_id"},
			wantInput: &domain.InputSpec{Name: "member_id", Type: domain.TypeString, Pattern: "[0-9]{5}", Example: "12345"},
			wantNote:  []string{"the run mapped to an input"},
		},
		{
			name: "trace name made snake_case", goal: "anything", inputs: map[string]string{"777": "memberId"}, step: typeStep("Member number", "777"),
			wantValue: domain.ValueExpr{Input: "member_id"},
			wantInput: &domain.InputSpec{Name: "member_id", Type: domain.TypeString, Pattern: "[0-9]{3}", Example: "777"},
		},
		{
			name: "input referenced by name", goal: "Look up member 12345", inputs: map[string]string{"12345": "member_id"}, step: named,
			wantValue: domain.ValueExpr{Input: "member_id"},
			wantInput: &domain.InputSpec{Name: "member_id", Type: domain.TypeString, Pattern: "[0-9]{5}", Example: "12345"},
		},
		{
			name: "password field", goal: "Sign on", step: password,
			wantValue: domain.ValueExpr{Input: "password"},
			wantInput: &domain.InputSpec{Name: "password", Type: domain.TypeString, Sensitive: true},
			wantNote:  []string{"input password (sensitive", "{$secret: REF}"},
		},
		{
			name: "sensitive node", goal: "Update tax id 123-45-6789", step: sensitive,
			wantValue: domain.ValueExpr{Input: "tax_id"},
			wantInput: &domain.InputSpec{Name: "tax_id", Type: domain.TypeString, Sensitive: true},
		},
		{
			name: "secret kept", goal: "Sign on", step: secret,
			wantValue: domain.ValueExpr{Secret: "corebank_operator"},
		},
		{
			name: "selected goal literal", goal: "Move it to Checking", step: sel,
			wantValue: domain.ValueExpr{Input: "from_account"},
			wantInput: &domain.InputSpec{Name: "from_account", Type: domain.TypeString, Example: "Checking"},
			wantNote:  []string{"consider type enum"},
		},
		{
			name: "literal not in the goal kept", goal: "Open a savings account", step: typeStep("Account type", "Savings"),
			wantValue: *domain.Lit("Savings"),
			wantNote:  []string{`types the literal "Savings", which is not in the goal`},
		},
		{
			name: "part of a goal word is not a goal literal", goal: "Look up member 12345", step: typeStep("Branch", "123"),
			wantValue: *domain.Lit("123"),
			wantNote:  []string{`the literal "123"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := traceOf(tc.goal, tc.step, clickStep("button", "Go"))
			tr.Inputs = tc.inputs
			res, data := mustCompile(t, tr, testOptions())
			c := res.Capability
			if got := c.Steps[0].Value; got == nil || !reflect.DeepEqual(*got, tc.wantValue) {
				t.Errorf("value = %v, want %v", got, tc.wantValue.String())
			}
			if tc.wantInput == nil {
				if len(c.Inputs) != 0 {
					t.Errorf("inputs = %+v, want none", c.Inputs)
				}
			} else {
				if len(c.Inputs) != 1 {
					t.Fatalf("inputs = %+v, want one", c.Inputs)
				}
				got, want := c.Inputs[0], *tc.wantInput
				want.Required = true
				got.Description = ""
				if !reflect.DeepEqual(got, want) {
					t.Errorf("input = %+v\n want %+v", got, want)
				}
				if want.Example != nil {
					if _, err := capability.CoerceInput(c.Inputs[0], want.Example.(string)); err != nil {
						t.Errorf("the example does not satisfy the input: %v", err)
					}
				}
			}
			if tc.wantNote != nil && !hasNote(res.Notes, tc.wantNote...) {
				t.Errorf("no note with %q in\n%s", tc.wantNote, strings.Join(res.Notes, "\n"))
			}
			if lit := tc.step.Literal; lit != "" && tc.wantInput != nil && tc.wantInput.Sensitive && bytes.Contains(data, []byte(lit)) {
				t.Errorf("the sensitive value %q is written in the capability", lit)
			}
		})
	}
}

func TestOutputTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text      string
		want      domain.ValueType
		transform domain.Transform
	}{
		{"$1,234.56", domain.TypeMoney, domain.TransformMoney},
		{"$0.00", domain.TypeMoney, domain.TransformMoney},
		{"USD 12.00", domain.TypeMoney, domain.TransformMoney},
		{"-$5.00", domain.TypeMoney, domain.TransformMoney},
		{"12,345,678.90", domain.TypeMoney, domain.TransformMoney},
		{"1234.56", domain.TypeMoney, domain.TransformMoney},
		{"  $7.25 ", domain.TypeMoney, domain.TransformMoney},
		{"1,234.5", domain.TypeString, domain.Transform{}},
		{"1.234,56 €", domain.TypeString, domain.Transform{}},
		{"-$-5.00", domain.TypeString, domain.Transform{}},
		{"11/30/2026", domain.TypeDate, domain.TransformDate},
		{"1/2/2026", domain.TypeDate, domain.TransformDate},
		{"2026-11-30", domain.TypeDate, domain.TransformDate},
		{"02/30/2026", domain.TypeString, domain.Transform{}},
		{"2026-13-01", domain.TypeString, domain.Transform{}},
		{"Active", domain.TypeString, domain.Transform{}},
		{"12345", domain.TypeString, domain.Transform{}},
		{"TRF-0001", domain.TypeString, domain.Transform{}},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			typ, tr := inferOutput(tc.text)
			if typ != tc.want || tr != tc.transform {
				t.Errorf("inferOutput(%q) = %s, %q; want %s, %q", tc.text, typ, tr, tc.want, tc.transform)
			}
			// Through Compile: the output, the step's transform and a note.
			// No clock: the compile time must not look like a leaked date.
			res, data := mustCompile(t, traceOf("read it", extractStep("Value", "value", tc.text)), Options{ID: "test.recorded"})
			c := res.Capability
			if o := c.Output("value"); o == nil || o.Type != tc.want || c.Steps[0].Transform != tc.transform {
				t.Errorf("output %+v, transform %q", o, c.Steps[0].Transform)
			}
			if !hasNote(res.Notes, "output value is "+string(tc.want)) {
				t.Errorf("no output type note in %q", res.Notes)
			}
			if strings.TrimSpace(tc.text) != "" && bytes.Contains(data, []byte(strings.TrimSpace(tc.text))) {
				t.Errorf("the extracted value %q is written in the capability", tc.text)
			}
		})
	}
}

func TestDroppedStepsNoted(t *testing.T) {
	t.Parallel()
	skipped := clickStep("button", "Clear")
	skipped.Verdict = "skipped"
	denied := clickStep("button", "Delete member")
	denied.Verdict = "denied"
	unverified := clickStep("link", "Help")
	unverified.Verdict = "unverified"
	odd := clickStep("link", "Odd")
	odd.Verdict = "maybe"
	raw := domain.TraceStep{Action: domain.Action{Type: domain.ActRawInput, X: 10, Y: 10}}
	nodeOnly := domain.TraceStep{Action: domain.Action{Type: domain.ActClick}, Node: &domain.Node{Role: "button", Name: "Lonely"}}
	noURL := domain.TraceStep{Action: domain.Action{Type: domain.ActNavigate}}
	tr := traceOf("search", clickStep("link", "Member Search"), skipped, denied, unverified, odd, raw, nodeOnly, noURL, clickStep("button", "Search"))
	res, _ := mustCompile(t, tr, testOptions())
	if got := stepIDs(res.Capability); !slices.Equal(got, []string{"click_member_search", "click_help", "click_search"}) {
		t.Errorf("steps = %v", got)
	}
	for _, want := range [][]string{
		{"trace step 1 (click button \"Clear\"", "dropped: skipped"},
		{"trace step 2 (click button \"Delete member\"", "dropped: denied by policy"},
		{"trace step 3 (click link \"Help\"", "kept although no witness confirmed"},
		{"trace step 4", `unknown verdict "maybe"`},
		{"trace step 5 (raw_input)", "console action"},
		{"trace step 6 (click button \"Lonely\")", "no target descriptor was recorded"},
		{"trace step 7 (navigate)", "names no URL"},
	} {
		if !hasNote(res.Notes, want...) {
			t.Errorf("no note with %q in\n%s", want, strings.Join(res.Notes, "\n"))
		}
	}
}

func TestIrreversibleStepGated(t *testing.T) {
	t.Parallel()
	review := clickStep("button", "Review transfer")
	review.Action.Risk = domain.RiskSafe
	save := clickStep("button", "Save draft")
	save.Action.Risk = domain.RiskElevated
	submit := clickStep("button", "Submit transfer")
	submit.Action.Risk = domain.RiskIrreversible
	submit.Postcondition = &domain.Predicate{NodeExists: target("heading", "Transfer Complete", "content")}
	post := clickStep("button", "Post")
	post.Action.Risk = domain.RiskIrreversible
	res, data := mustCompile(t, traceOf("transfer", review, save, submit, post), testOptions())
	c := res.Capability
	byID := func(id string) domain.Step { return *c.Step(id) }
	if s := byID("click_review_transfer"); s.Risk != domain.RiskSafe || s.Gate {
		t.Errorf("review = %+v", s)
	}
	if s := byID("click_save_draft"); s.Risk != domain.RiskElevated || s.Gate {
		t.Errorf("save = %+v", s)
	}
	if s := byID("click_submit_transfer"); s.Risk != domain.RiskIrreversible || !s.Gate || !s.Checkpoint || s.Wait == nil {
		t.Errorf("submit = %+v", s)
	}
	if s := byID("click_post"); s.Risk != domain.RiskIrreversible || !s.Gate || s.Checkpoint {
		t.Errorf("post = %+v", s)
	}
	if c.Risk != domain.RiskIrreversible {
		t.Errorf("capability risk = %s", c.Risk)
	}
	if !c.Escalation.Escalates(domain.CodeGateReached) {
		t.Errorf("triggers = %v, want GATE_REACHED", c.Escalation.Triggers)
	}
	if !hasNote(res.Notes, "step click_submit_transfer is irreversible", "gated") || !hasNote(res.Notes, "step click_post is irreversible", "no postcondition") {
		t.Errorf("notes = %s", strings.Join(res.Notes, "\n"))
	}
	if !bytes.Contains(data, []byte("    risk: irreversible\n    gate: true\n    checkpoint: true\n")) {
		t.Errorf("the gated step is not written as such:\n%s", data)
	}
}

func TestDuplicateStepIDs(t *testing.T) {
	t.Parallel()
	tr := traceOf("page through",
		clickStep("button", "Next"), clickStep("button", "Next"), clickStep("button", "Next"),
		clickStep("button", "Next!"), extractStep("Total", "total", "3"), extractStep("Total", "total_2", "4"))
	res, _ := mustCompile(t, tr, testOptions())
	want := []string{"click_next", "click_next_2", "click_next_3", "click_next_4", "extract_total", "extract_total_2"}
	if got := stepIDs(res.Capability); !slices.Equal(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
}

func TestEmptyTrace(t *testing.T) {
	t.Parallel()
	skipped := clickStep("button", "Search")
	skipped.Verdict = "skipped"
	tests := []struct {
		name    string
		trace   *domain.Trace
		wantErr error
		wantMsg string
	}{
		{"nil", nil, ErrEmptyTrace, "records no steps"},
		{"no steps", traceOf("goal"), ErrEmptyTrace, "records no steps"},
		{"every step dropped", traceOf("goal", skipped), ErrNothingToCompile, `trace step 0 (click button "Search" in frame "content") dropped: skipped`},
		{"only the entrypoint", traceOf("goal", domain.TraceStep{Action: domain.Action{Type: domain.ActNavigate, URL: testBase + "/"}}), ErrNothingToCompile, "only the entrypoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Compile(tc.trace, testOptions())
			if !errors.Is(err, tc.wantErr) || res != nil {
				t.Fatalf("Compile = %v, %v; want %v", res, err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
		})
	}
	t.Run("no base url", func(t *testing.T) {
		t.Parallel()
		tr := traceOf("goal", clickStep("button", "Go"))
		tr.BaseURL = ""
		tr.Steps[0].URLBefore = ""
		if _, err := Compile(tr, testOptions()); err == nil || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("Compile = %v, want a base URL error", err)
		}
	})
}

func TestNavigation(t *testing.T) {
	t.Parallel()
	nav := func(u string) domain.TraceStep {
		return domain.TraceStep{Action: domain.Action{Type: domain.ActNavigate, URL: u}}
	}
	member := nav(testBase + "/content/member/12345?tab=savings")
	member.Postcondition = &domain.Predicate{NodeExists: target("heading", "Member Details", "content")}
	tr := traceOf("Look up member 12345",
		nav(testBase+"/content/search"),
		typeStep("Member number", "12345"),
		member,
		nav("https://help.example.com/faq"),
		extractStep("Status", "status", "Active"),
	)
	res, _ := mustCompile(t, tr, testOptions())
	c := res.Capability
	if c.Entrypoint.URLPattern != "{base_url}/content/search" {
		t.Errorf("entrypoint = %q", c.Entrypoint.URLPattern)
	}
	want := []string{"type_member_number", "navigate_content_member_member_number", "navigate_help_example_com_faq", "extract_status"}
	if got := stepIDs(c); !slices.Equal(got, want) {
		t.Fatalf("steps = %v, want %v", got, want)
	}
	if s := c.Steps[1]; s.URL != "{base_url}/content/member/{input.member_number}?tab=savings" || s.Wait == nil || s.Wait.TimeoutMS != 10000 {
		t.Errorf("member navigation = %+v", s)
	}
	if s := c.Steps[2]; s.URL != "https://help.example.com/faq" {
		t.Errorf("other origin = %q", s.URL)
	}
	if !slices.Equal(c.Policy.AllowedDomains, []string{"127.0.0.1", "localhost", "help.example.com"}) {
		t.Errorf("allowed domains = %v", c.Policy.AllowedDomains)
	}
	if !hasNote(res.Notes, "another origin", "help.example.com") {
		t.Errorf("notes = %s", strings.Join(res.Notes, "\n"))
	}

	t.Run("relative navigation, entrypoint from a blank page", func(t *testing.T) {
		t.Parallel()
		first := clickStep("button", "Go")
		first.URLBefore = "about:blank"
		tr := traceOf("go", first, nav("/content/search?q=a b"))
		res, _ := mustCompile(t, tr, testOptions())
		c := res.Capability
		if c.Entrypoint.URLPattern != "{base_url}/" || c.Steps[1].URL != "{base_url}/content/search?q=a b" {
			t.Errorf("entrypoint %q, navigation %q", c.Entrypoint.URLPattern, c.Steps[1].URL)
		}
	})
	t.Run("base url with a path, entrypoint from the first step", func(t *testing.T) {
		t.Parallel()
		tr := traceOf("go", clickStep("button", "Go"))
		tr.BaseURL = "https://bank.example/app/"
		tr.Steps[0].URLBefore = "https://bank.example/app/home"
		res, _ := mustCompile(t, tr, testOptions())
		if got := res.Capability.Entrypoint.URLPattern; got != "{base_url}/home" {
			t.Errorf("entrypoint = %q", got)
		}
		if got := res.Capability.Policy.AllowedDomains; !slices.Equal(got, []string{"bank.example"}) {
			t.Errorf("allowed domains = %v", got)
		}
	})
}

func TestPostconditionNamingAnInputChecksIdentity(t *testing.T) {
	t.Parallel()
	typed := typeStep("Member number", "12345")
	typed.Postcondition = &domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: *target("textbox", "Member number", "content"), Value: "12345"}}
	search := clickStep("button", "Search")
	search.Postcondition = &domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "heading", Name: &domain.NameMatch{Value: "Member 12345", Match: domain.MatchContains}}}
	open := clickStep("link", "Statements")
	open.Postcondition = &domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: *target("textbox", "Member", ""), Value: "12345"}}
	tr := traceOf("Look up member 12345", typed, search, open)
	tr.Checkpoint = &domain.Predicate{AllOf: []domain.Predicate{{NodeExists: target("heading", "Member Details", "")}, {TextPresent: &domain.TextQuery{Text: "12345"}}}}
	tr.Outcome = &domain.Outcome{Code: "member_not_found", When: domain.Predicate{TextPresent: &domain.TextQuery{Text: "Member 12345 not found"}}}
	res, data := mustCompile(t, tr, testOptions())
	c := res.Capability
	if c.Steps[0].Postcondition != nil {
		t.Errorf("the type step checks its own read-back: %+v", c.Steps[0].Postcondition)
	}
	if p := c.Steps[1].Postcondition; p == nil || p.NodeExists == nil || p.NodeExists.Name.Value != "Member {input.member_number}" || p.NodeExists.Name.Match != domain.MatchContains || c.Steps[1].Wait == nil {
		t.Errorf("search postcondition = %+v", p)
	}
	if p := c.Steps[2].Postcondition; p == nil || p.NodeHasValue == nil || p.NodeHasValue.Input != "member_number" || p.NodeHasValue.Value != "" {
		t.Errorf("node_has_value postcondition = %+v", p)
	}
	if c.Checkpoint == nil || c.Checkpoint.When.AllOf[1].TextPresent.Text != "{input.member_number}" {
		t.Errorf("checkpoint = %+v", c.Checkpoint)
	}
	if len(c.Outcomes) != 1 || c.Outcomes[0].When.TextPresent.Text != "Member {input.member_number} not found" {
		t.Errorf("outcomes = %+v", c.Outcomes)
	}
	if !hasNote(res.Notes, "step type_member_number", "input member_number") || !hasNote(res.Notes, "the checkpoint checks", "identity check") {
		t.Errorf("notes = %s", strings.Join(res.Notes, "\n"))
	}
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); strings.Contains(l, "12345") && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "example:") && !strings.HasPrefix(l, "- ") {
			t.Errorf("the value 12345 is written into a check: %s", line)
		}
	}
	// The identity check binds to another run's value.
	b, err := capability.BindTemplates(c, map[string]any{"member_number": "23456"})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Steps[1].Postcondition.NodeExists.Name.Value; got != "Member 23456" {
		t.Errorf("bound heading = %q", got)
	}
}

func TestPostconditionNamingASensitiveInputIsLeftOut(t *testing.T) {
	t.Parallel()
	typed := typeStep("Password", "hunter2hunter2")
	typed.Node = &domain.Node{Role: "textbox", Name: "Password", States: domain.NodeStates{Password: true}}
	search := clickStep("button", "Sign on")
	search.Postcondition = &domain.Predicate{TextPresent: &domain.TextQuery{Text: "Welcome hunter2hunter2"}}
	url := clickStep("button", "Go")
	url.Postcondition = &domain.Predicate{URLMatches: "member/12345"}
	member := typeStep("Member number", "12345")
	tr := traceOf("Sign on with hunter2hunter2 and open member 12345", typed, search, member, url)
	tr.Checkpoint = &domain.Predicate{TextPresent: &domain.TextQuery{Text: "12345", Match: domain.MatchRegex}}
	res, data := mustCompile(t, tr, testOptions())
	c := res.Capability
	for _, st := range c.Steps {
		if st.Postcondition != nil {
			t.Errorf("step %s keeps a postcondition: %+v", st.ID, st.Postcondition)
		}
	}
	if c.Checkpoint != nil {
		t.Errorf("a regex checkpoint was templated: %+v", c.Checkpoint)
	}
	if bytes.Contains(data, []byte("hunter2")) {
		t.Errorf("the sensitive value is written:\n%s", data)
	}
	if !hasNote(res.Notes, "step click_sign_on", "sensitive input") || !hasNote(res.Notes, "checkpoint", "left out") {
		t.Errorf("notes = %s", strings.Join(res.Notes, "\n"))
	}
}

func TestSessionExpiredRecovery(t *testing.T) {
	t.Parallel()
	signOn := loadExample(t, "corebank.auth.sign_on")
	tests := []struct {
		name     string
		prereqs  []domain.Prerequisite
		known    map[string]*domain.Capability
		wantWhen *domain.Predicate // nil: no session_expired rule
		wantNote string
	}{
		{
			name:     "from the prerequisite's condition",
			prereqs:  []domain.Prerequisite{{Capability: "corebank.auth.sign_on", When: &domain.Predicate{NodeExists: target("button", "Sign on", "content")}}},
			wantWhen: &domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Sign on", Match: domain.MatchExact}, Scope: &domain.Scope{Frame: "content"}, RecordedStrategy: domain.StrategySemanticExact}},
		},
		{
			name:     "from the known capability's first step",
			prereqs:  []domain.Prerequisite{{Capability: "corebank.auth.sign_on@1.0.0"}},
			known:    map[string]*domain.Capability{"corebank.auth.sign_on": signOn},
			wantWhen: &domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "textbox", Name: &domain.NameMatch{Value: "Operator ID", Match: domain.MatchExact}, Scope: &domain.Scope{Frame: "content"}}},
			wantNote: `its first step's target, textbox "Operator ID" in frame "content"`,
		},
		{
			name:     "a known capability typing a secret signs on",
			prereqs:  []domain.Prerequisite{{Capability: "corebank.teller_gate", When: &domain.Predicate{NodeExists: target("button", "Sign on", "content")}}},
			known:    map[string]*domain.Capability{"corebank.teller_gate": signOn},
			wantWhen: &domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Sign on", Match: domain.MatchExact}, Scope: &domain.Scope{Frame: "content"}, RecordedStrategy: domain.StrategySemanticExact}},
		},
		{
			name:     "sign-on without condition or known steps",
			prereqs:  []domain.Prerequisite{{Capability: "corebank.auth.sign_on"}},
			wantNote: "add a session_expired recovery rule by hand",
		},
		{
			name:    "not a sign-on",
			prereqs: []domain.Prerequisite{{Capability: "memberdesk.open_workspace"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := traceOf("search", clickStep("button", "Search"))
			tr.Prerequisites = tc.prereqs
			opts := testOptions()
			opts.KnownCapabilities = tc.known
			res, _ := mustCompile(t, tr, opts)
			c := res.Capability
			if !reflect.DeepEqual(c.Prerequisites, tc.prereqs) {
				t.Errorf("prerequisites = %+v", c.Prerequisites)
			}
			var got *domain.RecoveryRule
			for i := range c.Recovery {
				if c.Recovery[i].ID == "session_expired" {
					got = &c.Recovery[i]
				}
			}
			switch {
			case tc.wantWhen == nil && got != nil:
				t.Errorf("unexpected rule %+v", got)
			case tc.wantWhen != nil && got == nil:
				t.Errorf("no session_expired rule in %+v", c.Recovery)
			case got != nil:
				if !reflect.DeepEqual(got.When, *tc.wantWhen) || got.Capability != tc.prereqs[0].Capability || got.Remedy != domain.RemedyRunCapability {
					t.Errorf("rule = %+v, when %+v", got, got.When.NodeExists)
				}
			}
			if tc.wantNote != "" && !hasNote(res.Notes, tc.wantNote) {
				t.Errorf("no note %q in\n%s", tc.wantNote, strings.Join(res.Notes, "\n"))
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	tr := traceOf("Look up the savings balance of member 12345", clickStep("button", "Search"))
	tr.Finished = false
	res, data := mustCompile(t, tr, Options{})
	c := res.Capability
	if c.ID != "discovered.look_savings_balance_member" || c.Version != DefaultVersion || c.Title != tr.Goal {
		t.Errorf("id %q version %q title %q", c.ID, c.Version, c.Title)
	}
	if c.Provenance.CompiledAt != "" || bytes.Contains(data, []byte("compiled_at")) {
		t.Errorf("compiled_at without a clock: %q", c.Provenance.CompiledAt)
	}
	if !hasNote(res.Notes, "derived from the goal") || !hasNote(res.Notes, "did not finish") {
		t.Errorf("notes = %s", strings.Join(res.Notes, "\n"))
	}

	known := testOptions()
	known.KnownCapabilities = map[string]*domain.Capability{"test.recorded": {ID: "test.recorded", Version: "1.0.0"}}
	res, _ = mustCompile(t, traceOf("go", clickStep("button", "Go")), known)
	if !hasNote(res.Notes, "test.recorded@1.0.0 already exists") {
		t.Errorf("notes = %s", strings.Join(res.Notes, "\n"))
	}
}

func TestDemonstration(t *testing.T) {
	t.Parallel()
	tr := traceOf("go", clickStep("button", "Go"))
	tr.Steps[0].Action.Actor = domain.ActorHuman
	res, data := mustCompile(t, tr, testOptions())
	if res.Capability.Provenance.Source != "demonstration" || !bytes.Contains(data, []byte("Compiled from a human demonstration with the goal: go")) {
		t.Errorf("provenance = %+v", res.Capability.Provenance)
	}
}
