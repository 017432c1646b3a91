package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

func TestOverlay(t *testing.T) {
	t.Parallel()
	base := loadExample(t, "memberdesk.transfer_funds.yaml")
	baseHash, err := capability.Hash(base)
	if err != nil {
		t.Fatal(err)
	}
	o := Overlay{Tenant: "acme", BaseURL: "http://127.0.0.1:8811", Targets: map[string]string{"review": "button:Check transfer"}}
	c, err := o.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != "1.3.0+acme" || c.ContentHash != "" {
		t.Errorf("version %q hash %q, want 1.3.0+acme and no hash yet", c.Version, c.ContentHash)
	}
	if c.Entrypoint.URLPattern != "http://127.0.0.1:8811/" {
		t.Errorf("entrypoint = %q", c.Entrypoint.URLPattern)
	}
	if got := c.Policy.AllowedDomains; len(got) != 1 || got[0] != "http://127.0.0.1:8811" {
		t.Errorf("allowed_domains = %v, want only the tenant's origin", got)
	}
	if n := c.Steps[5].Target.Name; c.Steps[5].ID != "review" || n.Value != "Check transfer" || n.Match != domain.MatchExact {
		t.Errorf("review target = %+v", c.Steps[5].Target)
	}
	if base.Steps[5].Target.Name.Value != "Review transfer" || base.Version != "1.3.0" {
		t.Error("Apply modified the base")
	}
	h, err := capability.Hash(c)
	if err != nil {
		t.Fatal(err)
	}
	if h == baseHash {
		t.Error("the overlay has the base's content hash")
	}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Parse("overlay.json", data); err != nil {
		t.Errorf("the effective capability does not validate: %v", err)
	}
	changes, err := Diff(base, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 4 { // entrypoint, allowed_domains, review target, version
		t.Errorf("diff base -> overlay: %v", changes)
	}
}

func TestOverlayRefusesBadInput(t *testing.T) {
	t.Parallel()
	base := loadExample(t, "memberdesk.transfer_funds.yaml")
	tests := []struct {
		name string
		o    Overlay
		want string
	}{
		{"tenant", Overlay{Tenant: "acme corp"}, `tenant "acme corp"`},
		{"base_url path", Overlay{Tenant: "a", BaseURL: "http://127.0.0.1:8811/x"}, "base_url"},
		{"base_url scheme", Overlay{Tenant: "a", BaseURL: "file:///etc"}, "base_url"},
		{"target syntax", Overlay{Tenant: "a", Targets: map[string]string{"review": "Review"}}, "target review="},
		{"unknown step", Overlay{Tenant: "a", Targets: map[string]string{"nope": "button:X"}}, `no step "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := tt.o.Apply(base); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Apply = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	over, err := Overlay{Tenant: "a"}.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Overlay{Tenant: "b"}).Apply(over); err == nil {
		t.Error("an overlay of an overlay was accepted")
	}
}
