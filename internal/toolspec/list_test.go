package toolspec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/toolspec"
)

// TestListArgs: a list input is a JSON array in the tool's input schema
// (bounded by max_items, objects closed to their declared fields), and a
// call's array reaches replay as the JSON text BindInputs takes.
func TestListArgs(t *testing.T) {
	t.Parallel()
	l, err := capability.Load("../capability/testdata/loop/checklist.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := toolspec.New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := json.Marshal(s.InputSchema["properties"].(map[string]any)["items"])
	if got := string(items); !strings.Contains(got, `"type":"array"`) || !strings.Contains(got, `"maxItems":5`) {
		t.Errorf("items schema %s", got)
	}
	args, err := s.Args(json.RawMessage(`{"items": ["Alpha", "Gamma (2%)"], "rows": [{"name": "Nuts", "qty": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if args["items"] != `["Alpha","Gamma (2%)"]` || args["rows"] != `[{"name":"Nuts","qty":2}]` {
		t.Errorf("args %q", args)
	}
	if _, err := capability.BindInputs(l.Capability, args); err != nil {
		t.Errorf("replay refuses the call's lists: %v", err)
	}
	for _, bad := range []string{
		`{"items": ["a","b","c","d","e","f"]}`,
		`{"items": "Alpha"}`,
		`{"items": ["a"], "rows": [{"name": "Nuts", "colour": "red"}]}`,
	} {
		if _, err := s.Args(json.RawMessage(bad)); err == nil || !strings.Contains(err.Error(), "/") {
			t.Errorf("%s: want a refusal naming the argument, got %v", bad, err)
		}
	}
}
