package capability

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// templated is a valid capability whose targets and checks take inputs.
const templated = `schema_version: 1
id: test.pick
version: 1.0.0
title: Pick a member
surface: web
entrypoint:
  url_pattern: "{base_url}/members"
inputs:
  - name: member_id
    type: string
    pattern: "[0-9]{5}"
  - name: label
    type: string
  - name: pattern_part
    type: string
    required: false
    default: "a.b"
  - name: password
    type: string
    sensitive: true
outputs:
  - name: member_name
    type: string
    source: {step: read_name}
  - name: balance
    type: money
    currency: USD
    source: {step: read_balance}
steps:
  - id: enter
    action: type
    target: {role: textbox, name: Member number}
    value: {$input: member_id}
    postcondition:
      node_has_value: {target: {role: textbox, name: Member number}, value: {$input: member_id}}
  - id: open
    action: click
    target: {role: link, name: "Member {input.member_id}"}
    postcondition:
      node_exists: {role: heading, name: {value: "Member {input.member_id}", match: contains}}
  - id: choose
    action: click
    target: {role: button, name: {$input: label}}
  - id: regex
    action: focus
    target: {role: textbox, name: {value: "^{input.pattern_part}[0-9]{2}$", match: regex}}
  - id: read_name
    action: extract
    target: {role: text, anchor: {relation: adjacent_to, text: "Name of {input.member_id}:"}}
    into: member_name
    transform: {strip_prefix: "Name:"}
    postcondition:
      text_present: "Member {input.member_id}"
  - id: read_balance
    action: extract
    target: {role: cell, anchor: {relation: row_of, text: Balance}}
    into: balance
    transform: {regex: "Balance: (.+)"}
recovery:
  - id: again
    when: {http_status_in: [502]}
    remedy: reload
    after_post: refuse
  - id: sign_on
    when: {node_exists: {role: textbox, name: Password}}
    remedy: run_capability
    capability: corebank.auth.sign_on@1.0.0
    content_hash: sha256:ed56772e1a1b8ca1f8fabc1eed1505721fc093f1185eed4f1f7630f44b621785
prerequisites:
  - capability: corebank.auth.sign_on
    content_hash: sha256:ed56772e1a1b8ca1f8fabc1eed1505721fc093f1185eed4f1f7630f44b621785
policy:
  allowed_domains: ["http://127.0.0.1:8811", "bank.example", "*.bank.example", "https://bank.example/"]
`

func TestBindTemplates(t *testing.T) {
	t.Parallel()
	l, err := Parse("templated.yaml", []byte(templated))
	if err != nil {
		t.Fatal(err)
	}
	c := l.Capability
	if !HasTemplates(c) || !ChecksIdentity(c) {
		t.Fatal("HasTemplates or ChecksIdentity = false")
	}
	if base, err := Load("testdata/base.yaml"); err != nil || HasTemplates(base.Capability) || ChecksIdentity(base.Capability) {
		t.Fatalf("base.yaml has templates? %v", err)
	}
	// A template in a step target only is no identity check.
	only := &domain.Capability{Steps: []domain.Step{{ID: "a", Action: domain.ActClick, Target: &domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Input: "label"}}}}}
	if !HasTemplates(only) || ChecksIdentity(only) {
		t.Error("a templated step target counts as an identity check")
	}
	before, _ := Canonical(c)
	inputs := map[string]any{"member_id": "12345", "label": "Open (new)", "pattern_part": "a.b"}
	b, err := BindTemplates(c, inputs)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := Canonical(c); string(after) != string(before) {
		t.Fatal("BindTemplates modified its argument")
	}
	if HasTemplates(b) {
		t.Error("the bound copy still has templates")
	}
	checks := []struct {
		field, got, want string
	}{
		{"node_has_value value", b.Steps[0].Postcondition.NodeHasValue.Value, "12345"},
		{"link name", b.Steps[1].Target.Name.Value, "Member 12345"},
		{"heading name (contains)", b.Steps[1].Postcondition.NodeExists.Name.Value, "Member 12345"},
		{"heading match kept", string(b.Steps[1].Postcondition.NodeExists.Name.Match), "contains"},
		{"$input name", b.Steps[2].Target.Name.Value, "Open (new)"},
		{"regex name quoted", b.Steps[3].Target.Name.Value, `^a\.b[0-9]{2}$`},
		{"anchor text", b.Steps[4].Target.Anchor.Text, "Name of 12345:"},
		{"text_present", b.Steps[4].Postcondition.TextPresent.Text, "Member 12345"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %q, want %q", ck.field, ck.got, ck.want)
		}
	}
	if b.Steps[2].Target.Name.Input != "" || b.Steps[0].Postcondition.NodeHasValue.Input != "" {
		t.Error("$input forms survive binding")
	}
	if b.ContentHash != c.ContentHash || b.Steps[4].Transform != (domain.Transform{StripPrefix: "Name:"}) {
		t.Error("binding changed what it should keep")
	}
	if _, err := BindTemplates(c, map[string]any{"member_id": "12345"}); err == nil {
		t.Fatal("binding without label succeeded")
	} else {
		var te *TemplateError
		if !errors.As(err, &te) || te.Input != "label" || te.Path != "steps[2].target.name.$input" {
			t.Fatalf("error %v (%+v), want a TemplateError naming steps[2].target.name.$input", err, te)
		}
	}
}

// TestNewFieldsRoundTrip checks the new forms survive the canonical JSON
// (which the content hash covers) and that a capability re-read from it
// hashes the same.
func TestNewFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	l, err := Parse("templated.yaml", []byte(templated))
	if err != nil {
		t.Fatal(err)
	}
	canon, err := Canonical(l.Capability)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"value":{"$input":"member_id"}`, `"name":{"$input":"label","match":"exact"}`,
		`"transform":{"strip_prefix":"Name:"}`, `"transform":{"regex":"Balance: (.+)"}`,
		`"currency":"USD"`, `"after_post":"refuse"`, `"content_hash":"sha256:ed56`,
	} {
		if !strings.Contains(string(canon), want) {
			t.Errorf("canonical JSON lacks %s:\n%s", want, canon)
		}
	}
	var back domain.Capability
	if err := json.Unmarshal(canon, &back); err != nil {
		t.Fatal(err)
	}
	h, err := Hash(&back)
	if err != nil || h != l.Hash {
		t.Fatalf("re-read hash %s, %v; want %s", h, err, l.Hash)
	}
	// A plain string transform stays a string.
	base, err := Load("testdata/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if canon, _ := Canonical(base.Capability); !strings.Contains(string(canon), `"transform":"money"`) {
		t.Errorf("transform money is not written as a string:\n%s", canon)
	}
}

func TestNewFieldProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, old, new, path, msg string
	}{
		{"undeclared input", `name: {$input: label}`, `name: {$input: colour}`, "steps[2].target.name.$input", `undeclared input "colour"`},
		{"sensitive input", `"Member {input.member_id}"}`, `"Member {input.password}"}`, "steps[1].target.name.value", `input "password" is sensitive`},
		{"optional without default", `default: "a.b"`, `example: "a.b"`, "steps[3].target.name.value", `optional and has no default`},
		{"anchor placeholder", `"Name of {input.member_id}:"`, `"Name of {input.nobody}:"`, "steps[4].target.anchor.text", `undeclared input "nobody"`},
		{"text placeholder", `text_present: "Member {input.member_id}"`, `text_present: "Member {input.password}"`, "steps[4].postcondition.text_present.text", "sensitive"},
		{"value and $input", `name: {$input: label}`, `name: {$input: label, value: Open}`, "steps[2].target.name", "exactly one of value and $input"},
		{"regex without group", `{regex: "Balance: (.+)"}`, `{regex: "Balance: .+"}`, "steps[5].transform.regex", "exactly one capture group (the value), has 0"},
		{"regex two groups", `{regex: "Balance: (.+)"}`, `{regex: "(B)alance: (.+)"}`, "steps[5].transform.regex", "has 2"},
		{"regex bad", `{regex: "Balance: (.+)"}`, `{regex: "Balance: (.+"}`, "steps[5].transform.regex", "does not compile"},
		{"transform two forms", `{regex: "Balance: (.+)"}`, `{regex: "B(.+)", strip_prefix: "B"}`, "steps[5].transform", ""},
		{"transform unknown", `transform: {strip_prefix: "Name:"}`, `transform: upper`, "steps[4].transform", ""},
		{"currency on string", "    type: string\n    source: {step: read_name}", "    type: string\n    currency: USD\n    source: {step: read_name}", "outputs[0].currency", "only allowed on a money output"},
		{"after_post on run_capability", "    capability: corebank.auth.sign_on@1.0.0\n", "    capability: corebank.auth.sign_on@1.0.0\n    after_post: entrypoint\n", "recovery[1].after_post", "only allowed for remedy reload"},
		{"pin without capability", "    after_post: refuse\n", "    after_post: refuse\n    content_hash: sha256:ed56772e1a1b8ca1f8fabc1eed1505721fc093f1185eed4f1f7630f44b621785\n", "recovery[0].content_hash", "needs a capability"},
		{"pin malformed", "  - capability: corebank.auth.sign_on\n    content_hash: sha256:ed56", "  - capability: corebank.auth.sign_on\n    content_hash: md5:ed56", "prerequisites[0].content_hash", ""},
		{"version range", "capability: corebank.auth.sign_on@1.0.0", "capability: corebank.auth.sign_on@1.0", "recovery[1].capability", "exact semantic version"},
		{"domain path", `"bank.example"`, `"bank.example/login"`, "policy.allowed_domains[1]", "bank.example/login"},
		{"domain origin path", `"http://127.0.0.1:8811"`, `"http://127.0.0.1:8811/app"`, "policy.allowed_domains[0]", "a path is not allowed"},
		{"domain query", `"http://127.0.0.1:8811"`, `"http://127.0.0.1:8811?x=1"`, "policy.allowed_domains[0]", "a query is not allowed"},
		{"domain userinfo", `"http://127.0.0.1:8811"`, `"http://user:pw@127.0.0.1:8811"`, "policy.allowed_domains[0]", "user info"},
		{"domain scheme", `"http://127.0.0.1:8811"`, `"ftp://127.0.0.1"`, "policy.allowed_domains[0]", "only http and https"},
		{"domain bare port", `"bank.example"`, `"bank.example:8811"`, "policy.allowed_domains[1]", "write scheme://host:port"},
		{"domain port range", `"http://127.0.0.1:8811"`, `"http://127.0.0.1:99999"`, "policy.allowed_domains[0]", "out of range"},
		{"has_value $input regex", "value: {$input: member_id}}\n  - id: open", "value: {$input: member_id}, match: regex}\n  - id: open", "steps[0].postcondition.node_has_value.match", "matched literally"},
		{"focus without target", "    action: focus\n    target: {role: textbox, name: {value: \"^{input.pattern_part}[0-9]{2}$\", match: regex}}", "    action: focus", "steps[3].target", "required for action focus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(templated, tc.old, tc.new, 1)
			if src == templated {
				t.Fatalf("fixture lacks %q", tc.old)
			}
			_, err := Parse("bad.yaml", []byte(src))
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("want *InvalidError, got %v", err)
			}
			for _, p := range inv.Problems {
				if p.Path == tc.path && strings.Contains(p.Message, tc.msg) && p.Line > 0 {
					if s := p.String(); !strings.HasPrefix(s, "bad.yaml:") {
						t.Errorf("problem %q does not lead with FILE:LINE", s)
					}
					return
				}
			}
			t.Errorf("no problem at %s containing %q; got:\n%v", tc.path, tc.msg, err)
		})
	}
}

func TestCheckAllowedDomain(t *testing.T) {
	t.Parallel()
	for entry, ok := range map[string]bool{
		"bank.example": true, "*.bank.example": true, "127.0.0.1": true, "localhost": true,
		"http://127.0.0.1:8811": true, "https://bank.example": true, "https://bank.example/": true,
		"http://[::1]:8080": true, "": false, "bank.example:80": false, "bank.example/x": false,
		"user@bank.example": false, "http://bank.example/x": false, "http://bank.example#f": false,
		"http://bank.example?": false, "javascript://x": false, "http://": false, "http://bank.example:": false,
		"-bank.example": false, "bank..example": false,
	} {
		if err := CheckAllowedDomain(entry); (err == nil) != ok {
			t.Errorf("CheckAllowedDomain(%q) = %v, want ok=%v", entry, err, ok)
		}
	}
}
