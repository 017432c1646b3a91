package domain

import "testing"

func TestCanonicalRole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		known          bool
	}{
		{"canonical stays", "button", "button", true},
		{"case folded", "TextBox", "textbox", true},
		{"ARIA synonym image", "image", "img", true},
		{"ARIA synonym presentation", "presentation", "none", true},
		{"grid cell is a cell", "gridcell", "cell", true},
		{"platform spelling is not translated", "RootWebArea", "rootwebarea", false},
		{"AT-SPI spelling is not translated", "push button", "push button", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CanonicalRole(tt.in)
			if got != tt.want {
				t.Fatalf("CanonicalRole(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if CanonicalRole(got) != got {
				t.Errorf("CanonicalRole is not idempotent on %q", got)
			}
			if IsRole(got) != tt.known {
				t.Errorf("IsRole(%q) = %v, want %v", got, IsRole(got), tt.known)
			}
		})
	}
	for r := range roles {
		if CanonicalRole(r) != r {
			t.Errorf("vocabulary role %q is not canonical", r)
		}
	}
	for _, r := range []string{RoleMain, RoleDialog, RoleAlertDialog, RoleBanner} {
		if !IsLandmark(r) {
			t.Errorf("IsLandmark(%q) = false", r)
		}
	}
	if IsLandmark(RoleButton) {
		t.Error("IsLandmark(button) = true")
	}
}
