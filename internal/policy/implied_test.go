package policy_test

import (
	"errors"
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

// TestImpliedRiskOfWhatIsUnderTheClick: a click on a container lands on the
// actionable descendant whose box holds the container's centre (issue 22:
// a safe click on a cell ran the "Transfer now" button at its centre), and
// Authorize's refusal names that control by role and name.
func TestImpliedRiskOfWhatIsUnderTheClick(t *testing.T) {
	t.Parallel()
	box := func(x, y, w, h float64) domain.Rect { return domain.Rect{X: x, Y: y, W: w, H: h} }
	snap := &domain.UiSnapshot{Nodes: []domain.Node{
		{Index: 0, Role: "document", Parent: -1, Children: []int{1, 3, 5, 7}, Bounds: box(0, 0, 800, 600)},
		{Index: 1, Role: "cell", Name: "Payee Ada", Parent: 0, Children: []int{2}, Bounds: box(0, 0, 300, 60)},
		{Index: 2, Role: "button", Name: "Transfer now", Parent: 1, Bounds: box(100, 15, 100, 30)},
		{Index: 3, Role: "group", Name: "Quick actions", Parent: 0, Children: []int{4}, Bounds: box(0, 100, 300, 60)},
		{Index: 4, Role: "button", Name: "Delete record", Parent: 3, Bounds: box(0, 100, 60, 30)}, // off centre
		{Index: 5, Role: "row", Name: "Bo", Parent: 0, Children: []int{6}, Bounds: box(0, 200, 300, 60)},
		{Index: 6, Role: "button", Name: "View history", Parent: 5, Bounds: box(100, 215, 100, 30)},
		{Index: 7, Role: "group", Name: "Loop", Parent: 0, Children: []int{8}, Bounds: box(0, 300, 300, 60)},
		{Index: 8, Role: "generic", Parent: 7, Children: []int{7, 8}, Bounds: box(0, 300, 300, 60)},
	}}
	click := domain.Action{Type: domain.ActClick}
	tests := []struct {
		name string
		a    domain.Action
		n    int
		want domain.Risk
	}{
		{"a cell whose centre is Transfer now", click, 1, domain.RiskIrreversible},
		{"a group whose button is off its centre", click, 3, domain.RiskSafe},
		{"a row whose centre is View history", click, 5, domain.RiskSafe},
		{"raw input at the point of the button", domain.Action{Type: domain.ActRawInput, X: 10, Y: 110}, 3, domain.RiskIrreversible},
		{"a cyclic tree ends", click, 7, domain.RiskSafe},
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
	_, err = pol.Authorize(policy.Request{Action: domain.Action{Type: domain.ActClick, StepID: "open", Risk: domain.RiskSafe},
		Node: &snap.Nodes[1], Snapshot: snap})
	if !policy.IsDenied(err) || domain.ErrorCode(err) != domain.CodePolicyDenied || !strings.Contains(err.Error(), `button "Transfer now"`) {
		t.Fatalf("a safe click on a cell around Transfer now: %v, want POLICY_DENIED naming the button", err)
	}
}

// TestAdmits: the surface reports what an action really reaches when it
// acts; the token admits only controls its authorization covers. Under
// AUTOMATION that is the declared risk; under HUMAN and DISCOVERY also a
// higher tier that would have needed no consent, grant or approval.
func TestAdmits(t *testing.T) {
	t.Parallel()
	cell := &domain.Node{Role: "cell", Name: "Payee Ada"}
	transfer := domain.Node{Role: "button", Name: "Transfer now"}
	save := domain.Node{Role: "button", Name: "Save"}
	link := domain.Node{Role: "link", Name: "Delete record"} // links commit nothing
	const hash = "sha256:x"
	approval := &policy.Approval{ContentHash: hash}
	tests := []struct {
		name    string
		cfg     policy.Config
		risk    domain.Risk
		consent bool
		prop    bool
		reached []domain.Node
		deny    string // the control named, "" to admit
	}{
		{"automation: safe reaches irreversible", policy.Config{Profile: policy.ProfileAutomation}, domain.RiskSafe, false, false,
			[]domain.Node{link, transfer}, `button "Transfer now"`},
		{"automation: safe reaches elevated", policy.Config{Profile: policy.ProfileAutomation}, domain.RiskSafe, false, false,
			[]domain.Node{save}, `button "Save"`},
		{"automation: undeclared reaches elevated", policy.Config{Profile: policy.ProfileAutomation}, "", false, false,
			[]domain.Node{save}, `button "Save"`},
		{"automation: safe reaches a link", policy.Config{Profile: policy.ProfileAutomation}, domain.RiskSafe, false, false,
			[]domain.Node{link}, ""},
		{"automation: elevated reaches elevated", policy.Config{Profile: policy.ProfileAutomation}, domain.RiskElevated, false, false,
			[]domain.Node{save}, ""},
		{"automation: irreversible, gate released", policy.Config{Profile: policy.ProfileAutomation, AllowIrreversible: true, ContentHash: hash, Approval: approval},
			domain.RiskIrreversible, false, false, []domain.Node{transfer}, ""},
		{"automation: the gate released does not widen a safe step", policy.Config{Profile: policy.ProfileAutomation, AllowIrreversible: true, ContentHash: hash, Approval: approval},
			domain.RiskSafe, false, false, []domain.Node{transfer}, `button "Transfer now"`},
		{"human: a safe click reaching elevated needs nothing", policy.Config{Profile: policy.ProfileHuman}, domain.RiskSafe, false, false,
			[]domain.Node{save}, ""},
		{"human: irreversible needs the operator's confirmation", policy.Config{Profile: policy.ProfileHuman}, domain.RiskSafe, false, false,
			[]domain.Node{transfer}, `button "Transfer now"`},
		{"human: a confirmed irreversible click", policy.Config{Profile: policy.ProfileHuman}, domain.RiskIrreversible, true, false,
			[]domain.Node{transfer}, ""},
		{"discovery: irreversible without a grant", policy.Config{Profile: policy.ProfileDiscovery, Autonomy: policy.LevelAuto}, domain.RiskSafe, false, true,
			[]domain.Node{transfer}, `button "Transfer now"`},
		{"discovery: sovereign delegates irreversible", policy.Config{Profile: policy.ProfileDiscovery, Autonomy: policy.LevelSovereign}, domain.RiskSafe, false, true,
			[]domain.Node{transfer}, ""},
		{"discovery: confirm-risky needs a consent for elevated", policy.Config{Profile: policy.ProfileDiscovery, Autonomy: policy.LevelConfirmRisky}, domain.RiskSafe, false, true,
			[]domain.Node{save}, `button "Save"`},
		{"discovery: auto lets elevated through", policy.Config{Profile: policy.ProfileDiscovery, Autonomy: policy.LevelAuto}, domain.RiskSafe, false, true,
			[]domain.Node{save}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pol, err := policy.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			a := domain.Action{Type: domain.ActClick, StepID: "pay", Risk: tt.risk}
			req := policy.Request{Action: a, Node: cell}
			if tt.consent {
				req.Consent = &policy.Consent{By: "ops", Proposal: policy.Proposal{Action: "click", Role: cell.Role, Name: cell.Name, Risk: tt.risk}}
			}
			if tt.prop {
				req.Proposal = &policy.Proposal{Action: "click", Role: cell.Role, Name: cell.Name, Risk: tt.risk}
			}
			aa, err := pol.Authorize(req)
			if err != nil {
				t.Fatalf("authorize: %v", err)
			}
			err = aa.Admits(tt.reached)
			if tt.deny == "" {
				if err != nil {
					t.Fatalf("Admits: %v, want nil", err)
				}
				return
			}
			var de *policy.DeniedError
			if !errors.As(err, &de) || de.Rule != "reached_risk" || domain.ErrorCode(err) != domain.CodePolicyDenied {
				t.Fatalf("Admits: %v, want a reached_risk POLICY_DENIED", err)
			}
			if !strings.Contains(err.Error(), tt.deny) || !strings.Contains(err.Error(), `cell "Payee Ada"`) {
				t.Errorf("Admits: %v, want it to name the node %s and the control %s", err, `cell "Payee Ada"`, tt.deny)
			}
		})
	}
	if err := (policy.AuthorizedAction{}).Admits(nil); !policy.IsDenied(err) {
		t.Errorf("the zero action admits: %v", err)
	}
}
