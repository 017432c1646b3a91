package browser

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func TestAXRole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, want string
		noise     bool
	}{
		{"RootWebArea", "document", false},
		{"WebArea", "document", false},
		{"Iframe", "iframe", false},
		{"StaticText", "text", false},
		{"LayoutTable", "table", false},
		{"LayoutTableRow", "row", false},
		{"LayoutTableCell", "cell", false},
		{"gridcell", "cell", false},
		{"MenuListOption", "option", false},
		{"MenuListPopup", "listbox", false},
		{"LabelText", "label", false},
		{"searchbox", "searchbox", false},
		{"image", "img", false},
		{"presentation", "none", false},
		{"Section", "region", false},
		{"button", "button", false},
		{"AlertDialog", "alertdialog", false},
		{"InlineTextBox", "", true},
		{"LineBreak", "", true},
		{"", "", false},
	}
	for _, tt := range tests {
		role, noise := axRole(tt.raw)
		if role != tt.want || noise != tt.noise {
			t.Errorf("axRole(%q) = %q, %v; want %q, %v", tt.raw, role, noise, tt.want, tt.noise)
		}
	}
	for raw, c := range chromiumRoles {
		if !domain.IsRole(c) || domain.CanonicalRole(c) != c {
			t.Errorf("Chromium role %q maps to %q, not a canonical role", raw, c)
		}
	}
}
