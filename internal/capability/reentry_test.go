package capability

import (
	"errors"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// reentryBase is a lookup that may start again at "enter" on a warm
// session showing the search form; "go"'s postcondition names the member
// asked for, the identity check reentry needs.
const reentryBase = `schema_version: 1
id: test.quick
version: 1.0.0
title: Quick lookup
surface: web
entrypoint:
  url_pattern: "{base_url}/"
inputs:
  - name: member_id
    type: string
    pattern: "[0-9]{5}"
outputs:
  - name: balance
    type: money
    source: {step: read_balance}
steps:
  - id: open
    action: click
    target: {role: link, name: Member Search}
  - id: enter
    action: type
    target: {role: textbox, name: Member number}
    value: {$input: member_id}
  - id: go
    action: click
    target: {role: button, name: Search}
    postcondition:
      node_exists: {role: cell, name: "{input.member_id}", anchor: {relation: row_of, text: Member number}}
  - id: read_balance
    action: extract
    target: {role: cell, anchor: {relation: row_of, text: Balance}}
    into: balance
    transform: money
reentry:
  step: enter
  when:
    node_exists: {role: textbox, name: Member number}
`

// TestReentryValidation: a reentry is accepted only with an identity check
// judged after its step and with nothing unsafe skipped; each refusal
// names the field.
func TestReentryValidation(t *testing.T) {
	t.Parallel()
	identity := `node_exists: {role: cell, name: "{input.member_id}", anchor: {relation: row_of, text: Member number}}`
	tests := []struct {
		name  string
		edits []string // old, new pairs
		want  []string // "path: message" prefixes, in order
	}{
		{name: "valid"},
		{name: "valid at the first step", edits: []string{"  step: enter\n", "  step: open\n"}},
		{name: "valid: identity in the checkpoint",
			edits: []string{"    postcondition:\n      " + identity + "\n", "", "reentry:\n", "checkpoint:\n  when:\n    " + identity + "\nreentry:\n"}},
		{name: "valid: identity in every member of any_of",
			edits: []string{"      " + identity, "      any_of:\n        - " + identity + "\n        - text_present: {text: \"{input.member_id}\"}"}},
		{name: "unknown step", edits: []string{"  step: enter\n", "  step: nowhere\n"},
			want: []string{`reentry.step: no step "nowhere"`}},
		{name: "no identity check", edits: []string{identity, "node_exists: {role: heading, name: Member Details}"},
			want: []string{"reentry: reentry needs an identity check: a predicate that depends on an input"}},
		{name: "identity only before the reentry step",
			edits: []string{"    target: {role: textbox, name: Member number}\n", "    target: {role: textbox, name: Member number}\n    precondition:\n      " + identity + "\n",
				identity + "\n  - id: read", "node_exists: {role: heading, name: Member Details}\n  - id: read", "  step: enter\n", "  step: go\n"},
			want: []string{"reentry: reentry needs an identity check"}},
		{name: "identity only in the reentry condition",
			edits: []string{identity + "\n  - id: read", "node_exists: {role: heading, name: Member Details}\n  - id: read",
				"node_exists: {role: textbox, name: Member number}\n", "node_has_value: {target: {role: textbox, name: Member number}, value: \"{input.member_id}\"}\n"},
			want: []string{"reentry: reentry needs an identity check"}},
		{name: "identity only under not",
			edits: []string{"      " + identity, "      not:\n        " + identity},
			want:  []string{"reentry: reentry needs an identity check"}},
		{name: "identity in one member of any_of only",
			edits: []string{"      " + identity, "      any_of:\n        - " + identity + "\n        - node_exists: {role: heading, name: Member Details}"},
			want:  []string{"reentry: reentry needs an identity check"}},
		{name: "a gated step before it", edits: []string{"    target: {role: link, name: Member Search}\n", "    target: {role: link, name: Member Search}\n    gate: true\n"},
			want: []string{`reentry.step: step "open" before "enter" is gated`}},
		{name: "an elevated step before it",
			edits: []string{"    target: {role: link, name: Member Search}\n", "    target: {role: link, name: Member Search}\n    risk: elevated\n", "title: Quick lookup\n", "title: Quick lookup\nrisk: elevated\n"},
			want:  []string{`reentry.step: step "open" before "enter" is elevated: a reentered run may skip only safe steps`}},
		{name: "an extraction before it", edits: []string{"  step: enter\n", "  step: done\n",
			"    transform: money\n", "    transform: money\n  - id: done\n    action: assert\n    postcondition:\n      " + identity + "\n"},
			want: []string{`reentry.step: step "read_balance" before "done" extracts output "balance"`}},
		{name: "an invalid condition", edits: []string{"node_exists: {role: textbox, name: Member number}\n", "url_matches: \"(\"\n"},
			want: []string{"reentry.when.url_matches: regular expression does not compile"}},
		{name: "a condition naming an undeclared input",
			edits: []string{"node_exists: {role: textbox, name: Member number}\n", "text_present: {text: \"{input.nobody}\"}\n"},
			want:  []string{`reentry.when.text_present.text: placeholder names undeclared input "nobody"`}},
		{name: "a condition of no known kind", edits: []string{"node_exists: {role: textbox, name: Member number}\n", "shows: search\n"},
			want: []string{"reentry.when"}},
		{name: "no condition", edits: []string{"  when:\n    node_exists: {role: textbox, name: Member number}\n", ""},
			want: []string{"reentry"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text := reentryBase
			for i := 0; i < len(tc.edits); i += 2 {
				if !strings.Contains(text, tc.edits[i]) {
					t.Fatalf("no %q to edit", tc.edits[i])
				}
				text = strings.Replace(text, tc.edits[i], tc.edits[i+1], 1)
			}
			_, err := Parse("quick.yaml", []byte(text))
			var got []string
			var inv *InvalidError
			switch {
			case errors.As(err, &inv):
				for _, p := range inv.Problems {
					got = append(got, p.Path+": "+p.Message)
				}
			case err != nil:
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %q", got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], w)
				}
			}
		})
	}
}

// TestReentryConditionIsNoIdentityCheck: ChecksIdentity ignores the
// reentry condition (it says where a run starts, not what it found), and
// a reentry condition's placeholders are bound like any other predicate's.
func TestReentryConditionIsNoIdentityCheck(t *testing.T) {
	t.Parallel()
	l, err := Parse("quick.yaml", []byte(reentryBase))
	if err != nil {
		t.Fatal(err)
	}
	if !ChecksIdentity(l.Capability) {
		t.Fatal("ChecksIdentity = false on a postcondition naming the member")
	}
	c := *l.Capability
	c.Steps = append(c.Steps[:0:0], c.Steps...)
	c.Steps[2].Postcondition = nil
	c.Reentry.When.NodeExists = nil
	c.Reentry.When.TextPresent = &domain.TextQuery{Text: "Member {input.member_id}"}
	if ChecksIdentity(&c) {
		t.Error("ChecksIdentity counts the reentry condition")
	}
	bound, err := BindTemplates(&c, map[string]any{"member_id": "23456"})
	if err != nil {
		t.Fatal(err)
	}
	if got := bound.Reentry.When.TextPresent.Text; got != "Member 23456" {
		t.Errorf("bound reentry condition %q", got)
	}
}
