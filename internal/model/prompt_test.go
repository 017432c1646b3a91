package model_test

import (
	"testing"

	"github.com/cuahq/cua/internal/model"
)

func TestUserPrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  model.Request
		want string
	}{
		{
			name: "goal and observation",
			req:  model.Request{Goal: "Find M-1", Observation: "[1] button \"Go\""},
			want: "Goal:\nFind M-1\n\nObservation:\n[1] button \"Go\"",
		},
		{
			name: "everything",
			req: model.Request{
				System: "not in the user prompt", Goal: "Find M-1", Context: []string{"Budget: step 1 of 5.", "Notice: stuck"},
				Observation: "[1] button \"Go\"", Corrective: "Answer with JSON.", Screenshot: []byte("png"),
			},
			want: "Goal:\nFind M-1\n\nContext:\n- Budget: step 1 of 5.\n- Notice: stuck\n\nObservation:\n[1] button \"Go\"\n\nCorrection:\nAnswer with JSON.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := model.UserPrompt(tc.req); got != tc.want {
				t.Errorf("UserPrompt =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestTurnFromText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
	}{
		{"JSON", ` {"a":1}` + "\n", `{"a":1}`},
		{"fenced JSON", "```json\n{\"a\": 1}\n```", `{"a": 1}`},
		{"bare fence", "```\n[1]\n```", `[1]`},
		{"fenced prose stays", "```\nclick it\n```", "```\nclick it\n```"},
		{"prose", "I would click Save.", "I would click Save."},
		{"empty", "  ", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := string(model.TurnFromText(tc.text)); got != tc.want {
				t.Errorf("TurnFromText(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
	if (model.Usage{InputTokens: 2, OutputTokens: 3}).Total() != 5 {
		t.Error("Usage.Total")
	}
}
