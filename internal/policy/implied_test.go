package policy_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

func TestImpliedRiskOfEnter(t *testing.T) {
	t.Parallel()
	snap := &domain.UiSnapshot{Nodes: []domain.Node{
		{Index: 0, Role: "document", Parent: -1},
		{Index: 1, Role: "textbox", Name: "Amount", Frame: "content", Region: "Review Transfer", Parent: 0, States: domain.NodeStates{Focused: true}},
		{Index: 2, Role: "button", Name: "Submit transfer", Frame: "content", Region: "Review Transfer", Parent: 0},
		{Index: 3, Role: "textbox", Name: "Member number", Frame: "content", Region: "Member Search", Parent: 0},
		{Index: 4, Role: "button", Name: "Search", Frame: "content", Region: "Member Search", Parent: 0},
	}}
	enter := domain.Action{Type: domain.ActPressKey, Key: "Enter"}
	tests := []struct {
		name string
		a    domain.Action
		n    *domain.Node
		want domain.Risk
	}{
		{"Enter in a transfer form submits it", enter, &snap.Nodes[1], domain.RiskIrreversible},
		{"Enter in a search form", enter, &snap.Nodes[3], domain.RiskSafe},
		{"untargeted Enter lands on the focused field", enter, nil, domain.RiskIrreversible},
		{"Tab submits nothing", domain.Action{Type: domain.ActPressKey, Key: "Tab"}, &snap.Nodes[1], domain.RiskSafe},
		{"a carriage return is Enter under another name", domain.Action{Type: domain.ActPressKey, Key: "\r"}, &snap.Nodes[1], domain.RiskIrreversible},
		{"Return is Enter", domain.Action{Type: domain.ActPressKey, Key: "Return"}, &snap.Nodes[1], domain.RiskIrreversible},
		{"a click is judged by its own node", domain.Action{Type: domain.ActClick}, &snap.Nodes[4], domain.RiskSafe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := policy.ImpliedRisk(snap, tt.a, tt.n); got != tt.want {
				t.Errorf("ImpliedRisk = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestImpliedRiskOfInnerText: a click on the text inside a button runs the
// button's handler, so it carries the button's risk (issue 9: an "Open
// account" commit went through as safe when the target named its text node).
func TestImpliedRiskOfInnerText(t *testing.T) {
	t.Parallel()
	snap := &domain.UiSnapshot{Nodes: []domain.Node{
		{Index: 0, Role: "document", Parent: -1, Children: []int{1, 3, 5}},
		{Index: 1, Role: "button", Name: "Open account", Parent: 0, Children: []int{2}},
		{Index: 2, Role: "text", Name: "Open account", Parent: 1},
		{Index: 3, Role: "link", Name: "Wire money", Parent: 0, Children: []int{4}},
		{Index: 4, Role: "image", Name: "Wire money", Parent: 3},
		{Index: 5, Role: "generic", Parent: 0, Children: []int{6}},
		{Index: 6, Role: "text", Name: "Delete everything", Parent: 5},
		{Index: 7, Role: "text", Name: "cycle", Parent: 8},
		{Index: 8, Role: "generic", Parent: 7},
	}}
	click := domain.Action{Type: domain.ActClick}
	tests := []struct {
		name string
		a    domain.Action
		n    int
		want domain.Risk
	}{
		{"text inside a committing button", click, 2, domain.RiskElevated},
		{"raw input on it too", domain.Action{Type: domain.ActRawInput}, 2, domain.RiskElevated},
		{"image inside a link: links commit nothing", click, 4, domain.RiskSafe},
		{"text with no actionable ancestor", click, 6, domain.RiskSafe},
		{"a parent cycle ends", click, 7, domain.RiskSafe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := policy.ImpliedRisk(snap, tt.a, &snap.Nodes[tt.n]); got != tt.want {
				t.Errorf("ImpliedRisk = %s, want %s", got, tt.want)
			}
		})
	}
	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation})
	if err != nil {
		t.Fatal(err)
	}
	_, err = pol.Authorize(policy.Request{Action: domain.Action{Type: domain.ActClick, StepID: "open", Target: &domain.TargetDescriptor{Role: "text"}},
		Node: &snap.Nodes[2], Snapshot: snap})
	if !policy.IsDenied(err) || !strings.Contains(err.Error(), "declares safe") {
		t.Fatalf("a click on a committing button's text declared safe: %v, want denied as undeclared risk", err)
	}
}
