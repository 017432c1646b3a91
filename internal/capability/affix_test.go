package capability

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// affixCap names payees three ways from inputs: a starts_with/ends_with
// pair, a regex of named alternatives and a regex with an optional part.
const affixCap = `schema_version: 1
id: test.payee
version: 1.0.0
title: Pick a payee
surface: web
entrypoint:
  url_pattern: "{base_url}/payees"
inputs:
  - name: first
    type: string
  - name: last
    type: string
  - name: secret_word
    type: string
    sensitive: true
steps:
  - id: pair
    action: click
    target: {role: button, name: {starts_with: "Pay {input.first}", ends_with: "{input.last}"}}
  - id: either
    action: click
    target: {role: button, name: {value: "^Pay (?:{input.first}|{input.last})$", match: regex}}
  - id: optional
    action: click
    target: {role: button, name: {value: "^Pay {input.first}(?: and {input.last})?$", match: regex}}
    postcondition:
      node_absent: {role: button, name: {ends_with: "{input.last}", match: normalized}}
`

// TestBindStartsWithEndsWith binds the pair as plain text (a prefix is not
// a pattern) and quotes the inputs of the regex names, so named
// alternatives and optional parts built from inputs match literally.
func TestBindStartsWithEndsWith(t *testing.T) {
	t.Parallel()
	l, err := Parse("payee.yaml", []byte(affixCap))
	if err != nil {
		t.Fatal(err)
	}
	b, err := BindTemplates(l.Capability, map[string]any{"first": "A.B", "last": "B+C", "secret_word": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if n := b.Steps[0].Target.Name; n.StartsWith != "Pay A.B" || n.EndsWith != "B+C" || n.Value != "" {
		t.Errorf("pair bound to %+v, want starts_with %q ends_with %q", n, "Pay A.B", "B+C")
	}
	if n := b.Steps[2].Postcondition.NodeAbsent.Name; n.EndsWith != "B+C" {
		t.Errorf("predicate pair bound to %+v", n)
	}
	for _, tc := range []struct {
		step int
		name string
		want bool
	}{
		{1, "Pay A.B", true}, {1, "Pay B+C", true}, {1, "Pay AxB", false}, {1, "Pay BBC", false}, {1, "Pay A.B B+C", false},
		{2, "Pay A.B", true}, {2, "Pay A.B and B+C", true}, {2, "Pay A.B and BBC", false}, {2, "Pay AxB", false},
	} {
		re := regexp.MustCompile(b.Steps[tc.step].Target.Name.Value)
		if got := re.MatchString(tc.name); got != tc.want {
			t.Errorf("step %s: %q matches %q = %v, want %v", b.Steps[tc.step].ID, re, tc.name, got, tc.want)
		}
	}
	if l.Capability.Steps[0].Target.Name.StartsWith != "Pay {input.first}" {
		t.Error("BindTemplates changed the capability it was given")
	}
}

// TestStartsWithEndsWithProblems refuses a pair matched contains or regex,
// a name with both a value and a pair, and placeholders of a pair that
// name an undeclared or sensitive input, each naming the field.
func TestStartsWithEndsWithProblems(t *testing.T) {
	t.Parallel()
	pair := `name: {starts_with: "Pay {input.first}", ends_with: "{input.last}"}`
	for _, tc := range []struct {
		name, new, path, msg string
	}{
		{"contains", `name: {starts_with: "Pay {input.first}", ends_with: "{input.last}", match: contains}`, "steps[0].target.name.match", "exact or normalized, not contains"},
		{"regex", `name: {starts_with: "Pay", match: regex}`, "steps[0].target.name.match", "not regex"},
		{"value too", `name: {value: "Pay", ends_with: "{input.last}"}`, "steps[0].target.name", "exactly one of value and $input (or starts_with/ends_with)"},
		{"undeclared", `name: {starts_with: "Pay {input.nobody}"}`, "steps[0].target.name.starts_with", `undeclared input "nobody"`},
		{"sensitive", `name: {ends_with: "{input.secret_word}"}`, "steps[0].target.name.ends_with", `input "secret_word" is sensitive`},
		{"empty", `name: {starts_with: ""}`, "steps[0].target.name.starts_with", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("bad.yaml", []byte(strings.Replace(affixCap, pair, tc.new, 1)))
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("want *InvalidError, got %v", err)
			}
			for _, p := range inv.Problems {
				if p.Path == tc.path && strings.Contains(p.Message, tc.msg) && p.Line == 19 {
					return
				}
			}
			t.Errorf("no problem at %s (line 19) mentioning %q in %v", tc.path, tc.msg, inv.Problems)
		})
	}
}
