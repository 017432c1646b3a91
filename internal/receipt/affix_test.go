package receipt_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/receipt"
)

// TestGateNamesAStartAndEnd: a gated step whose target name is a
// starts_with/ends_with pair is named "START…END" in the gate receipt, not
// by an empty name.
func TestGateNamesAStartAndEnd(t *testing.T) {
	t.Parallel()
	transfer := load(t, "memberdesk.transfer_funds")
	c := *transfer.Capability
	c.Steps = append([]domain.Step(nil), c.Steps...)
	for i := range c.Steps {
		if c.Steps[i].ID == "submit" {
			tg := *c.Steps[i].Target
			tg.Name = &domain.NameMatch{StartsWith: "Submit", EndsWith: "transfer", Match: domain.MatchExact}
			c.Steps[i].Target = &tg
		}
	}
	plan, _ := receipt.NewPlan(receipt.PlanInput{RunID: "r", Capability: &c, ContentHash: transfer.Hash})
	_, g, err := receipt.NewReceipt(receipt.RunInput{Record: transferRecord(domain.StatusNeedsHuman, domain.CodeGateReached), Capability: &c, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	if want := `button "Submit…transfer"`; g.Target != want || !strings.Contains(g.Decision, want) {
		t.Errorf("target %q, decision %q; want %s in both", g.Target, g.Decision, want)
	}
}
