package receipt_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/receipt"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const examples = "../../examples/capabilities"

func load(t *testing.T, id string) *capability.Loaded {
	t.Helper()
	l, err := capability.Load(filepath.Join(examples, id+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// golden validates v against kind's schema and compares it with
// testdata/<name>.json (rewritten with -update).
func golden(t *testing.T, kind receipt.Kind, name string, v any) []byte {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, '\n')
	if err := receipt.Validate(kind, raw); err != nil {
		t.Errorf("%s does not match its schema: %v\n%s", name, err, raw)
	}
	p := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("%s differs from %s:\n%s", name, p, raw)
	}
	return raw
}

func transferRecord(status domain.RunStatus, code domain.FailureCode) *domain.RunRecord {
	return &domain.RunRecord{
		SchemaVersion: 1, RunID: "r20261202T120000-0000beef", Capability: "memberdesk.transfer_funds@1.2.0",
		ContentHash: "sha256:09571ee0fd72a8f9a310a0ccc9016ac56ceb55fdd3a87f226935aeb0850a109f",
		Status:      status, FailureCode: code, DispatchCount: 9, DurationMS: 4066,
		Inputs: map[string]any{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "250.00"},
		Steps:  []domain.StepResult{{ID: "open_transfer", Action: "click", Status: "ok"}, {ID: "review", Action: "click", Status: "ok"}},
		Effects: &domain.Effects{Steps: []domain.StepEffect{
			{Step: "submit", Risk: domain.RiskIrreversible, Effect: domain.EffectNotSent},
			{Step: "confirm", Risk: domain.RiskIrreversible, Effect: domain.EffectNotSent}}},
	}
}

func TestProfile(t *testing.T) {
	t.Parallel()
	for _, host := range []string{receipt.HostBrowser, receipt.HostState, receipt.HostDesktop} {
		p, err := receipt.NewProfile(host)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		golden(t, receipt.KindProfile, "profile-"+host, p)
	}
	if _, err := receipt.NewProfile("mainframe"); err == nil || !strings.Contains(err.Error(), `"mainframe"`) {
		t.Errorf("unknown host: %v", err)
	}
	// The builder and the schema both refuse a profile that crosses the
	// boundary.
	tests := []struct {
		name  string
		cross func(*receipt.Profile)
	}{
		{"credentials", func(p *receipt.Profile) { p.Boundary.CredentialsCopied = true }},
		{"cookies", func(p *receipt.Profile) { p.Boundary.CookiesExported = true }},
		{"raw screenshots", func(p *receipt.Profile) { p.Boundary.RawScreenshotsCopied = true }},
		{"private bodies", func(p *receipt.Profile) { p.Boundary.RawPrivateBodiesCopied = true }},
		{"ungated writes", func(p *receipt.Profile) { p.Boundary.ExternalWriteAllowedWithoutGate = true }},
		{"write mode", func(p *receipt.Profile) { p.Capabilities.ExternalWrite = "allowed" }},
	}
	for _, tt := range tests {
		p, _ := receipt.NewProfile(receipt.HostBrowser)
		tt.cross(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", tt.name, p.Boundary)
		}
		raw, _ := json.Marshal(p)
		if err := receipt.Validate(receipt.KindProfile, raw); err == nil {
			t.Errorf("%s: the schema accepted it", tt.name)
		}
	}
}

func TestPlans(t *testing.T) {
	t.Parallel()
	transfer, lookup := load(t, "memberdesk.transfer_funds"), load(t, "memberdesk.savings_balance")
	tests := []struct {
		name string
		in   receipt.PlanInput
		unit string
	}{
		{"plan-transfer-gated", receipt.PlanInput{RunID: "r1", Capability: transfer.Capability, ContentHash: transfer.Hash}, "replay_until_gate"},
		{"plan-transfer-released", receipt.PlanInput{RunID: "r2", Capability: transfer.Capability, ContentHash: transfer.Hash,
			ReleasedGates: []string{"submit"}, AllowIrreversible: true, Approved: true}, "replay_to_checkpoint"},
		{"plan-lookup", receipt.PlanInput{RunID: "r3", Capability: lookup.Capability, ContentHash: lookup.Hash}, "replay_to_checkpoint"},
	}
	for _, tt := range tests {
		p, err := receipt.NewPlan(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if p.ActionUnit != tt.unit {
			t.Errorf("%s: action unit %s, want %s", tt.name, p.ActionUnit, tt.unit)
		}
		golden(t, receipt.KindPlan, tt.name, p)
	}
	if _, err := receipt.NewPlan(receipt.PlanInput{}); err == nil {
		t.Error("a plan without a capability was built")
	}
}

func TestReceipts(t *testing.T) {
	t.Parallel()
	transfer, lookup := load(t, "memberdesk.transfer_funds"), load(t, "memberdesk.savings_balance")
	gated, _ := receipt.NewPlan(receipt.PlanInput{RunID: "r", Capability: transfer.Capability, ContentHash: transfer.Hash})
	released, _ := receipt.NewPlan(receipt.PlanInput{RunID: "r", Capability: transfer.Capability, ContentHash: transfer.Hash,
		ReleasedGates: []string{"submit"}, AllowIrreversible: true, Approved: true})
	lookupPlan, _ := receipt.NewPlan(receipt.PlanInput{RunID: "r", Capability: lookup.Capability, ContentHash: lookup.Hash})

	atGate := transferRecord(domain.StatusNeedsHuman, domain.CodeGateReached)
	done := transferRecord(domain.StatusSuccess, "")
	done.Steps = append(done.Steps, domain.StepResult{ID: "submit", Status: "ok"}, domain.StepResult{ID: "confirm", Status: "ok"})
	done.Outputs = map[string]any{"confirmation": "TRF-0001"}
	done.Effects = &domain.Effects{Sent: true, Steps: []domain.StepEffect{
		{Step: "submit", Risk: domain.RiskIrreversible, Effect: domain.EffectConfirmed},
		{Step: "confirm", Risk: domain.RiskIrreversible, Effect: domain.EffectConfirmed}}}
	unknown := transferRecord(domain.StatusNeedsHuman, domain.CodeUnexpectedState)
	unknown.Effects = &domain.Effects{Sent: true, Unconfirmed: true, Steps: []domain.StepEffect{
		{Step: "submit", Risk: domain.RiskIrreversible, Effect: domain.EffectSentUnconfirmed},
		{Step: "confirm", Risk: domain.RiskIrreversible, Effect: domain.EffectNotSent}}}
	modal := &domain.RunRecord{RunID: "r20261202T120000-0000cafe", Capability: "memberdesk.savings_balance@1.2.0", ContentHash: lookup.Hash,
		Status: domain.StatusNeedsHuman, FailureCode: domain.CodeUnexpectedState, DispatchCount: 3, Inputs: map[string]any{"member_id": "12345"}}
	failed := &domain.RunRecord{RunID: "r20261202T120000-0000f00d", Capability: "memberdesk.savings_balance@1.2.0", ContentHash: lookup.Hash,
		Status: domain.StatusFailed, FailureCode: domain.CodeInputInvalid}
	tests := []struct {
		name    string
		in      receipt.RunInput
		outcome string
		gate    bool
	}{
		{"receipt-stopped-at-gate", receipt.RunInput{Record: atGate, Capability: transfer.Capability, Plan: gated, Screenshots: 9}, receipt.OutcomeStoppedAtGate, true},
		{"receipt-completed", receipt.RunInput{Record: done, Capability: transfer.Capability, Plan: released, Screenshots: 12}, receipt.OutcomeCompleted, false},
		{"receipt-needs-human-unconfirmed", receipt.RunInput{Record: unknown, Capability: transfer.Capability, Plan: released, Screenshots: 10}, receipt.OutcomeNeedsHuman, false},
		{"receipt-unknown-modal", receipt.RunInput{Record: modal, Capability: lookup.Capability, Plan: lookupPlan, UnknownModal: true, Screenshots: 3}, receipt.OutcomeUnknownModal, false},
		{"receipt-failed", receipt.RunInput{Record: failed, Capability: lookup.Capability, Plan: lookupPlan}, receipt.OutcomeFailed, false},
	}
	for _, tt := range tests {
		r, g, err := receipt.NewReceipt(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != tt.outcome || (g != nil) != tt.gate {
			t.Errorf("%s: outcome %s gate %v, want %s %v", tt.name, r.Outcome, g != nil, tt.outcome, tt.gate)
		}
		golden(t, receipt.KindReceipt, tt.name, r)
		if g != nil {
			golden(t, receipt.KindGate, strings.Replace(tt.name, "receipt-", "gate-", 1), g)
		}
	}
}

// TestGateNamesTheExactDecision: the gate says what a person approves,
// with every input it acts on.
func TestGateNamesTheExactDecision(t *testing.T) {
	t.Parallel()
	transfer := load(t, "memberdesk.transfer_funds")
	plan, _ := receipt.NewPlan(receipt.PlanInput{RunID: "r", Capability: transfer.Capability, ContentHash: transfer.Hash})
	_, g, err := receipt.NewReceipt(receipt.RunInput{Record: transferRecord(domain.StatusNeedsHuman, domain.CodeGateReached),
		Capability: transfer.Capability, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	want := `Approve the irreversible click on button "Submit transfer" (step submit of Transfer funds between a member's accounts, ` +
		`memberdesk.transfer_funds@1.2.0) with amount=250.00, from_account=Savings, member_id=12345, to_account=Checking`
	if g.Decision != want {
		t.Errorf("decision\n got %s\nwant %s", g.Decision, want)
	}
	// An author's own phrasing takes the inputs.
	c := *transfer.Capability
	c.Steps = append([]domain.Step(nil), c.Steps...)
	for i := range c.Steps {
		if c.Steps[i].ID == "submit" {
			c.Steps[i].Description = "Approve the transfer of {input.amount} from {input.member_id}-{input.from_account} to {input.member_id}-{input.to_account}"
		}
	}
	_, g, _ = receipt.NewReceipt(receipt.RunInput{Record: transferRecord(domain.StatusNeedsHuman, domain.CodeGateReached), Capability: &c, Plan: plan})
	if want := "Approve the transfer of 250.00 from 12345-Savings to 12345-Checking"; g.Decision != want {
		t.Errorf("phrased decision %q, want %q", g.Decision, want)
	}
}

// TestNoLeak: a secret in a message, the value of a sensitive input and
// of a sensitive output appear in no record, even when the record handed
// in still holds them unmasked.
func TestNoLeak(t *testing.T) {
	t.Parallel()
	const secret, pin, ssn = "Teller-Pass-9f3kq2zzW7", "4921", "078-05-1120"
	l := load(t, "memberdesk.transfer_funds")
	c := *l.Capability
	c.Inputs = append(append([]domain.InputSpec(nil), c.Inputs...), domain.InputSpec{Name: "pin", Type: "string", Sensitive: true})
	c.Outputs = append(append([]domain.OutputSpec(nil), c.Outputs...), domain.OutputSpec{Name: "ssn", Type: "string", Sensitive: true})
	plan, _ := receipt.NewPlan(receipt.PlanInput{RunID: "r", Capability: &c, ContentHash: l.Hash})
	for _, code := range []domain.FailureCode{domain.CodeGateReached, domain.CodeUnexpectedState, ""} {
		rec := transferRecord(domain.StatusNeedsHuman, code)
		if code == "" {
			rec.Status = domain.StatusSuccess
		}
		rec.Message = "the application says: wrong password " + secret
		rec.Inputs["pin"] = pin
		rec.Outputs = map[string]any{"ssn": ssn, "confirmation": "TRF-0001 " + secret}
		rec.Returns = map[string]string{"detail": secret}
		rec.Steps = append(rec.Steps, domain.StepResult{ID: "enter_amount", Status: "failed", Message: "typed " + pin + " " + secret})
		r, g, err := receipt.NewReceipt(receipt.RunInput{Record: rec, Capability: &c, Plan: plan, UnknownModal: code == domain.CodeUnexpectedState})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []any{r, g, plan} {
			raw, _ := json.Marshal(v)
			for _, bad := range []string{secret, pin, ssn, "wrong password"} {
				if bytes.Contains(raw, []byte(bad)) {
					t.Errorf("%s: a record holds %q: %s", code, bad, raw)
				}
			}
		}
		if g != nil && g.Inputs["pin"] != "####" {
			t.Errorf("sensitive input in the gate = %q, want its shape ####", g.Inputs["pin"])
		}
	}
}
