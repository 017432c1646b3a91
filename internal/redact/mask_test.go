package redact

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func TestMaskShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"$1,234.56", "$#,###.##"},
		{"Jane Doe", "xxxx xxx"},
		{"123-45-6789", "###-##-####"},
		{"2024-01-15", "####-##-##"},
		{"A1b2-C3", "x#x#-x#"},
		{"Zoë Ångström", "xxx xxxxxxxx"},
		{"٣٤ €", "## €"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := MaskShape(tt.in); got != tt.want {
				t.Errorf("MaskShape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMaskSensitive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key, value, want string
	}{
		{"credential hides length", "password", "hunter2", Marker},
		{"pin", "PIN", "1234", Marker},
		{"other keeps shape", "date_of_birth", "1990-02-03", "####-##-##"},
		{"amount", "balance", "$1,234.56", "$#,###.##"},
		{"empty", "password", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := MaskSensitive(tt.key, tt.value); got != tt.want {
				t.Errorf("MaskSensitive(%q, %q) = %q, want %q", tt.key, tt.value, got, tt.want)
			}
		})
	}
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	b := setup(t, "hunter2")
	in := &domain.UiSnapshot{
		URL:    "https://app.test/login?pw=hunter2",
		Title:  "Login",
		Dialog: &domain.Dialog{Type: "alert", Message: "hi jane@example.com"},
		Frames: []domain.Frame{{Name: "main", URL: "https://app.test/?t=hunter2"}},
		Nodes: []domain.Node{
			{Index: 0, Role: "textbox", Name: "Password", Value: "hunter2", States: domain.NodeStates{Password: true, Editable: true}},
			{Index: 1, Role: "textbox", Name: "SSN", Value: "123-45-6789", Sensitive: true, States: domain.NodeStates{Editable: true}},
			{Index: 2, Role: "StaticText", Name: "$1,234.56", Sensitive: true},
			{Index: 3, Role: "StaticText", Name: "note hunter2", Children: []int{4}},
		},
	}
	out := b.r.Snapshot(in)
	checks := []struct{ got, want string }{
		{out.URL, "https://app.test/login?pw=[REDACTED]"},
		{out.Dialog.Message, "hi [REDACTED:email]"},
		{out.Frames[0].URL, "https://app.test/?t=[REDACTED]"},
		{out.Nodes[0].Value, Marker},
		{out.Nodes[0].Name, "Password"},
		{out.Nodes[1].Value, "###-##-####"},
		{out.Nodes[1].Name, "SSN"},
		{out.Nodes[2].Name, "$#,###.##"},
		{out.Nodes[3].Name, "note [REDACTED]"},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %q, want %q", i, c.got, c.want)
		}
	}
	if in.Nodes[0].Value != "hunter2" || in.Dialog.Message != "hi jane@example.com" || in.Frames[0].URL != "https://app.test/?t=hunter2" {
		t.Error("Snapshot modified its input")
	}
	out.Nodes[3].Children[0] = 99
	if in.Nodes[3].Children[0] != 4 {
		t.Error("Snapshot shares Children with its input")
	}
	if b.r.Snapshot(nil) != nil {
		t.Error("Snapshot(nil) != nil")
	}
}
