package desktopsim_test

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/surface/sim/desktopsim"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// TestConformance is the proof that a platform with its own role names
// fills the port by mapping inside its adapter.
func TestConformance(t *testing.T) {
	t.Parallel()
	surfacetest.Exercise(t, func(t *testing.T) surfacetest.Harness {
		s := desktopsim.New()
		t.Cleanup(func() { _ = s.Close() })
		return surfacetest.Harness{Surface: s, URL: s.URL}
	})
}

// TestToolkitSpeaksItsOwnRoles keeps the proof honest: the platform's tree
// uses AT-SPI names the port's vocabulary does not hold, and the adapter
// maps every one of them.
func TestToolkitSpeaksItsOwnRoles(t *testing.T) {
	t.Parallel()
	k := desktopsim.NewToolkit()
	eng, err := policy.New(policy.Config{Profile: policy.ProfileDiscovery, AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	nav, err := eng.Authorize(policy.Request{Action: domain.Action{Type: domain.ActNavigate,
		URL: k.URL(surfacetest.PageMain), Actor: domain.ActorAutomation}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Handle(nav); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range k.Accessible().Nodes {
		seen[n.Role] = true
		if got := desktopsim.Role(n.Role); !domain.IsRole(got) {
			t.Errorf("AT-SPI role %q maps to %q, not canonical", n.Role, got)
		}
	}
	for _, r := range []string{"push button", "combo box", "document frame", "text"} {
		if !seen[r] {
			t.Errorf("the toolkit's tree has no %q node: %v", r, seen)
		}
		if domain.IsRole(r) && r != "text" {
			t.Errorf("%q is a canonical role: the proof would be vacuous", r)
		}
	}
	tests := []struct{ atspi, want string }{
		{"push button", domain.RoleButton},
		{"text", domain.RoleTextbox}, // an entry: canonical "text" is static text
		{"label", domain.RoleText},
		{"combo box", domain.RoleCombobox},
		{"document frame", domain.RoleDocument},
		{"page tab", domain.RoleTab},
		{"no such role", domain.RoleGeneric},
	}
	for _, tt := range tests {
		if got := desktopsim.Role(tt.atspi); got != tt.want {
			t.Errorf("Role(%q) = %q, want %q", tt.atspi, got, tt.want)
		}
	}
}
