package replay

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// TestUndeclaredModalIsJudgedPerDialog: declaring one dialog (the transfer's
// confirm) does not make every other dialog expected.
func TestUndeclaredModalIsJudgedPerDialog(t *testing.T) {
	t.Parallel()
	c := &domain.Capability{Steps: []domain.Step{{
		ID: "submit", Action: domain.ActClick,
		Target:        &domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Submit transfer", Match: domain.MatchExact}},
		Postcondition: &domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "alertdialog", Name: &domain.NameMatch{Value: "Submit transfer", Match: domain.MatchContains}}},
	}}}
	r := &run{c: c}
	tests := []struct {
		name string
		node domain.Node
		want string
	}{
		{"the declared confirm", domain.Node{Role: "alertdialog", Name: "Submit transfer of $25.00? This cannot be undone."}, ""},
		{"an undeclared notice", domain.Node{Role: "dialog", Name: "Notice"}, "Notice"},
		{"another alert", domain.Node{Role: "alertdialog", Name: "Session expired"}, "Session expired"},
		{"a hidden dialog", domain.Node{Role: "dialog", Name: "Notice", States: domain.NodeStates{Hidden: true}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &domain.UiSnapshot{Nodes: []domain.Node{tt.node}}
			if got := r.undeclaredModal(s); got != tt.want {
				t.Errorf("undeclaredModal = %q, want %q", got, tt.want)
			}
		})
	}
}
