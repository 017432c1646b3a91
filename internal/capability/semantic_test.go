package capability

import (
	"errors"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestActionRules checks each row of actionRules and exclusiveFields
// through Parse: step 1 of testdata/base.yaml ("go", a click on a target)
// is given another action and fields, and the problems on steps[1] must be
// exactly the wanted ones, in order.
func TestActionRules(t *testing.T) {
	t.Parallel()
	base, err := os.ReadFile("testdata/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	until := map[string]any{"until": map[string]any{"url_matches": "x"}}
	tests := []struct {
		name   string
		action string
		set    map[string]any
		drop   bool // drop the target
		want   []string
	}{
		{name: "click valid", action: "click"},
		{name: "click with value", action: "click", set: map[string]any{"value": "v"}, want: []string{"value: not allowed for action click"}},
		{name: "click without target", action: "click", drop: true, want: []string{"target: required for action click"}},
		{name: "type without value", action: "type", want: []string{"value: required for action type"}},
		{name: "select without target or value", action: "select", drop: true, want: []string{"target: required for action select", "value: required for action select"}},
		{name: "press_key without key", action: "press_key", drop: true, want: []string{"key: required for action press_key"}},
		{name: "press_key unknown key", action: "press_key", drop: true, set: map[string]any{"key": "Bogus"}, want: []string{`key: unknown key "Bogus"`}},
		{name: "navigate with target", action: "navigate", set: map[string]any{"url": "{base_url}/x"}, want: []string{"target: not allowed for action navigate"}},
		{name: "navigate without url", action: "navigate", drop: true, want: []string{"url: required for action navigate"}},
		{name: "extract without into", action: "extract", want: []string{"into: required for action extract"}},
		{name: "wait_for without wait", action: "wait_for", drop: true, want: []string{"wait: required for action wait_for"}},
		{name: "wait_for valid", action: "wait_for", drop: true, set: map[string]any{"wait": until}},
		{name: "assert with target", action: "assert", want: []string{"postcondition: required for action assert", "target: not allowed for action assert"}},
		{name: "reload with value", action: "reload", drop: true, set: map[string]any{"value": "v"}, want: []string{"value: not allowed for action reload"}},
		{name: "focus valid", action: "focus"},
		{name: "key only for press_key", action: "click", set: map[string]any{"key": "Enter"}, want: []string{"key: not allowed for action click"}},
		{name: "url only for navigate", action: "click", set: map[string]any{"url": "{base_url}/"}, want: []string{"url: not allowed for action click"}},
		{name: "into and transform only for extract", action: "click", set: map[string]any{"into": "balance", "transform": "trim"},
			want: []string{"into: not allowed for action click", "transform: not allowed for action click"}},
		{name: "wait until only for wait_for", action: "click", set: map[string]any{"wait": until},
			want: []string{"wait.until: only allowed for action wait_for (other steps wait for their postcondition)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var doc map[string]any
			if err := yaml.Unmarshal(base, &doc); err != nil {
				t.Fatal(err)
			}
			step := doc["steps"].([]any)[1].(map[string]any)
			step["action"] = tc.action
			for k, v := range tc.set {
				step[k] = v
			}
			if tc.drop {
				delete(step, "target")
			}
			data, err := yaml.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			_, err = Parse("step.yaml", data)
			var inv *InvalidError
			if errors.As(err, &inv) {
				for _, p := range inv.Problems {
					if rest, ok := strings.CutPrefix(p.Path, "steps[1]."); ok {
						got = append(got, rest+": "+p.Message)
					}
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems on steps[1]:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
