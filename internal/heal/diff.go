package heal

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// Change is one leaf of a capability that differs between a base and a
// draft, e.g. steps[search].target.name.value "Search" -> "Look up".
type Change struct {
	// Path names the field: "steps[search].target.name.value", "risk",
	// "outputs[status].enum".
	Path string `json:"path"`
	// Before and After are the field's compact JSON ("" when absent).
	Before string `json:"before"`
	After  string `json:"after"`
	// Refused says why a proposal may not make this change ("" when it
	// may).
	Refused string `json:"refused,omitempty"`
}

// String formats c as one line: "~ path: before -> after", with the reason
// a refused change quarantines its proposal.
func (c Change) String() string {
	s := fmt.Sprintf("~ %s: %s -> %s", c.Path, orNone(c.Before), orNone(c.After))
	if c.Refused != "" {
		s += "  [refused: " + c.Refused + "]"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// LocatorFields are the target fields a proposal may change: how a step
// finds its control, never what the step does.
var LocatorFields = []string{"name", "anchor", "hints", "ordinal", "scope", "recorded_strategy"}

// keyed are the capability's lists whose elements have an identity.
var keyed = map[string]string{
	"inputs": "name", "outputs": "name", "steps": "id", "outcomes": "code",
	"recovery": "id", "prerequisites": "capability",
}

var targetPath = regexp.MustCompile(`^steps\[([^\]]+)\]\.target\.([a-z_]+)(\.|$)`)

// Diff compares base and draft field by field and marks each change a
// proposal may not make: anything but a locator field of a step's target
// (plus version and content_hash), and the anchor of a step that reads an
// output (the anchor says which value is read, which is what, not how).
func Diff(base, draft *domain.Capability) ([]Change, error) {
	a, err := flatten(base)
	if err != nil {
		return nil, fmt.Errorf("diff: base: %w", err)
	}
	b, err := flatten(draft)
	if err != nil {
		return nil, fmt.Errorf("diff: draft: %w", err)
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []Change
	for _, k := range keys {
		if a[k] == b[k] {
			continue
		}
		c := Change{Path: k, Before: a[k], After: b[k]}
		c.Refused = refusal(base, k)
		out = append(out, c)
	}
	return out, nil
}

// Refused returns the refused changes of cs.
func Refused(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if c.Refused != "" {
			out = append(out, c)
		}
	}
	return out
}

// refusal says why path may not change in a proposal, or "".
func refusal(base *domain.Capability, path string) string {
	if path == "version" || path == "content_hash" {
		return ""
	}
	m := targetPath.FindStringSubmatch(path)
	if m == nil {
		return refusedWhat(path)
	}
	st := base.Step(m[1])
	switch {
	case st == nil:
		return "a step the base does not have"
	case !slices.Contains(LocatorFields, m[2]):
		return "target." + m[2] + " is not a locator field"
	case m[2] == "anchor" && st.Action == domain.ActExtract:
		return fmt.Sprintf("the anchor of step %s says which value output %s reads (what, not how)", st.ID, st.Into)
	}
	return ""
}

// refusedWhat names the part of the capability a non-target path changes.
func refusedWhat(path string) string {
	head := path
	if i := strings.IndexAny(head, ".["); i >= 0 {
		head = head[:i]
	}
	switch {
	case strings.Contains(path, ".risk") || head == "risk":
		return "risk is what a step may do"
	case strings.Contains(path, ".effects"):
		return "an effect contract is what a step does"
	case strings.Contains(path, ".postcondition") || strings.Contains(path, ".precondition") || head == "checkpoint":
		return "an identity check or condition is what the run must see"
	case strings.Contains(path, ".gate"):
		return "a gate is a human review"
	case head == "steps":
		return "only a step's target locator fields may change"
	}
	return head + " is part of what the capability does"
}

// flatten maps every leaf of c's JSON form to its compact JSON; elements
// of keyed lists are named by their key, other lists are one leaf.
func flatten(c *domain.Capability) (map[string]string, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, x := range v {
		walk(out, k, x, keyed[k])
	}
	return out, nil
}

func walk(out map[string]string, path string, v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return
		}
		for k, y := range x {
			walk(out, path+"."+k, y, "")
		}
		return
	case []any:
		if key != "" {
			for i, e := range x {
				id := fmt.Sprint(i)
				if m, ok := e.(map[string]any); ok && m[key] != nil {
					id = fmt.Sprint(m[key])
				}
				walk(out, path+"["+id+"]", e, "")
			}
			return
		}
	case nil:
		return
	}
	raw, _ := json.Marshal(v)
	out[path] = string(raw)
}
