package policy_test

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

func TestNameRisk(t *testing.T) {
	t.Parallel()
	const (
		safe         = domain.RiskSafe
		elevated     = domain.RiskElevated
		irreversible = domain.RiskIrreversible
	)
	tests := []struct {
		name  string
		label string
		want  domain.Risk
	}{
		// The three examples of the design.
		{"submit transfer", "Submit transfer", irreversible},
		{"review transfer", "Review transfer", safe},
		{"open account", "Open account", elevated},

		// Irreversible words.
		{"transfer alone", "Transfer", irreversible},
		{"delete", "Delete", irreversible},
		{"remove", "Remove payee", irreversible},
		{"close account", "Close account", irreversible},
		{"wire", "Wire funds", irreversible},
		{"pay", "Pay", irreversible},
		{"pay now", "Pay now", irreversible},
		{"payment", "Make payment", irreversible},
		{"withdraw", "Withdraw", irreversible},
		{"withdrawal", "Request withdrawal", irreversible},
		{"disburse", "Disburse loan", irreversible},
		{"purge", "Purge records", irreversible},
		{"terminate", "Terminate contract", irreversible},
		{"destroy", "Destroy", irreversible},
		{"void", "Void check", irreversible},
		{"charge off with a dash", "Charge-off", irreversible},
		{"write off with a dash", "Write-off balance", irreversible},
		{"irreversible wins over elevated", "Confirm and transfer", irreversible},
		{"irreversible after elevated word", "Submit payment", irreversible},
		{"upper case", "DELETE ACCOUNT", irreversible},
		{"punctuation separates words", "transfer/funds", irreversible},
		{"surrounding punctuation", "  «Pay!»  ", irreversible},
		{"neutral word later does not neutralise", "Transfer history", irreversible},
		{"neutral word mid-phrase does not neutralise", "Do not cancel payment", irreversible},
		{"reviewed is not review", "Reviewed, now pay", irreversible},
		{"digits are word characters", "Pay 500", irreversible},

		// Elevated words.
		{"submit", "Submit", elevated},
		{"confirm", "Confirm", elevated},
		{"save", "Save changes", elevated},
		{"apply", "Apply", elevated},
		{"approve", "Approve", elevated},
		{"send", "Send message", elevated},
		{"update", "Update address", elevated},
		{"post", "Post", elevated},
		{"create", "Create user", elevated},
		{"authorize", "Authorize", elevated},
		{"accept", "Accept terms", elevated},
		{"continue", "Continue", elevated},
		{"ok", "OK", elevated},
		{"yes", "Yes", elevated},
		{"mixed case", "sUbMiT", elevated},

		// Neutral prefixes make the whole control safe.
		{"review", "Review payment", safe},
		{"preview", "Preview transfer", safe},
		{"cancelling a payment mutates it", "Cancel payment", irreversible},
		{"cancelling a transfer mutates it", "Cancel transfer", irreversible},
		{"view", "View transfer", safe},
		{"back", "Back", safe},
		{"back to delete", "Back to delete list", safe},
		{"history", "History", safe},
		{"search", "Search transfers", safe},
		{"find", "Find payee", safe},
		{"neutral prefix after punctuation", "« Review payment", safe},
		{"neutral prefix upper case", "REVIEW TRANSFER", safe},

		// Whole words only.
		{"display is not pay", "Display", safe},
		{"word forms count: a button named Payments history fails closed", "Payments history", irreversible},
		{"repay is not pay", "Repay", safe},
		{"avoid is not void", "Avoid duplicates", safe},
		{"submitted is not submit", "Submitted", safe},
		{"posting is not post", "Posting date", safe},
		{"okay is not ok", "Okay", safe},
		{"token is not ok", "Token", safe},
		{"deleted is not delete", "Deleted items", safe},
		{"wireless is not wire", "Wireless", safe},
		{"word forms count: Transfers", "Transfers", irreversible},

		// Nothing.
		{"go", "Go", safe},
		{"empty", "", safe},
		{"blank", "   ", safe},
		{"only punctuation", "…!?", safe},
		{"other script", "Überweisung", safe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := policy.NameRisk(tt.label); got != tt.want {
				t.Errorf("NameRisk(%q) = %q, want %q", tt.label, got, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	node := func(role, name, desc string) *domain.Node {
		return &domain.Node{Role: role, Name: name, Description: desc, Ref: "r"}
	}
	tests := []struct {
		name string
		typ  domain.ActionType
		node *domain.Node
		want domain.Risk
	}{
		{"click irreversible button", domain.ActClick, node("button", "Submit transfer", ""), domain.RiskIrreversible},
		{"click elevated button", domain.ActClick, node("button", "Open account", ""), domain.RiskElevated},
		{"click safe button", domain.ActClick, node("button", "Review transfer", ""), domain.RiskSafe},
		{"click menuitem", domain.ActClick, node("menuitem", "Delete", ""), domain.RiskIrreversible},
		{"link is never judged by name", domain.ActClick, node("link", "Submit transfer", ""), domain.RiskSafe},
		{"payments history link", domain.ActClick, node("link", "Payments history", ""), domain.RiskSafe},
		{"pay now link", domain.ActClick, node("link", "Pay now", ""), domain.RiskSafe},
		{"option is not judged", domain.ActClick, node("option", "Delete", ""), domain.RiskSafe},
		{"checkbox is not judged", domain.ActClick, node("checkbox", "Delete", ""), domain.RiskSafe},
		{"textbox is not judged", domain.ActClick, node("textbox", "Transfer amount", ""), domain.RiskSafe},
		{"typing is not judged", domain.ActType, node("button", "Delete", ""), domain.RiskSafe},
		{"select is not judged", domain.ActSelect, node("combobox", "Pay from", ""), domain.RiskSafe},
		{"extract is not judged", domain.ActExtract, node("button", "Delete", ""), domain.RiskSafe},
		{"press key on a button is judged", domain.ActPressKey, node("button", "Submit", ""), domain.RiskElevated},
		{"press key without node", domain.ActPressKey, nil, domain.RiskSafe},
		{"click without node", domain.ActClick, nil, domain.RiskSafe},
		{"navigate", domain.ActNavigate, nil, domain.RiskSafe},
		{"raw input is at least elevated", domain.ActRawInput, nil, domain.RiskElevated},
		{"raw input on a safe button", domain.ActRawInput, node("button", "Go", ""), domain.RiskElevated},
		{"raw input on an irreversible button", domain.ActRawInput, node("button", "Delete", ""), domain.RiskIrreversible},
		{"raw input on a link", domain.ActRawInput, node("link", "Delete", ""), domain.RiskElevated},
		{"description counts", domain.ActClick, node("button", "OK", "Transfer $500 to Jane?"), domain.RiskIrreversible},
		{"description only", domain.ActClick, node("button", "", "Delete this payee"), domain.RiskIrreversible},
		{"neutral name beats description", domain.ActClick, node("button", "Cancel", "Delete account?"), domain.RiskSafe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := policy.Classify(domain.Action{Type: tt.typ}, tt.node); got != tt.want {
				t.Errorf("Classify(%s, %+v) = %q, want %q", tt.typ, tt.node, got, tt.want)
			}
		})
	}
}

func TestClassifyIgnoresDeclaredRisk(t *testing.T) {
	t.Parallel()
	// Classify computes the control's risk; the step's declaration is
	// compared with it by Authorize, never trusted by Classify.
	a := domain.Action{Type: domain.ActClick, Risk: domain.RiskIrreversible}
	if got := policy.Classify(a, &domain.Node{Role: "button", Name: "Go"}); got != domain.RiskSafe {
		t.Errorf("Classify = %q, want safe", got)
	}
}

func TestNameRiskCompoundsAndWordForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		label string
		want  domain.Risk
	}{
		{"Review and submit payment", domain.RiskIrreversible},
		{"View and pay bill", domain.RiskIrreversible},
		{"Review & transfer", domain.RiskIrreversible},
		{"Review transfer", domain.RiskSafe},
		{"Make payments", domain.RiskIrreversible},
		{"Deleting", domain.RiskIrreversible},
		{"Approve transfers", domain.RiskIrreversible},
		{"Submitting", domain.RiskElevated},
		{"Cancel card", domain.RiskIrreversible},
		{"Cancel membership", domain.RiskIrreversible},
		{"Cancel scheduled transfer", domain.RiskIrreversible},
		{"Revoke access", domain.RiskIrreversible},
		{"Deactivate member", domain.RiskIrreversible},
		{"Erase record", domain.RiskIrreversible},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			t.Parallel()
			if got := policy.NameRisk(tt.label); got != tt.want {
				t.Errorf("NameRisk(%q) = %s, want %s", tt.label, got, tt.want)
			}
		})
	}
}
