package capability

import (
	"strings"
	"testing"
)

// shapedInputs declares inputs whose transforms shape the caller's value
// before its pattern is checked.
const shapedInputs = `schema_version: 1
id: test.shaped_inputs
version: 1.0.0
title: Shaped inputs
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: safe
inputs:
  - name: code
    type: string
    pattern: "[A-Z]{3}"
    transform: [trim, upper]
  - name: ssn
    type: string
    transform: [digits_only, {format: "###-##-####"}]
  - name: word
    type: string
    required: false
    transform: [lower]
steps:
  - id: type_code
    action: type
    target: {role: textbox, name: Code}
    value: {$input: code}
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 5
  max_duration_ms: 10000
`

// TestInputTransforms (issue 24 item 4): transforms shape the caller's
// value, in order, before its spec checks it; a format of the wrong length
// is refused naming both lengths; the transforms are part of the content
// hash and survive a round trip through the canonical form.
func TestInputTransforms(t *testing.T) {
	t.Parallel()
	l, err := Parse("shaped.yaml", []byte(shapedInputs))
	if err != nil {
		t.Fatal(err)
	}
	got, err := BindInputs(l.Capability, map[string]string{"code": "  abc ", "ssn": "123 45 6789", "word": "MiXeD"})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"code": "ABC", "ssn": "123-45-6789", "word": "mixed"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	tests := []struct {
		name string
		in   map[string]string
		want string
	}{
		{"the pattern sees the shaped value", map[string]string{"code": "abcd", "ssn": "123456789"}, "code: does not match pattern"},
		{"format of the wrong length", map[string]string{"code": "abc", "ssn": "12-34"}, `ssn: format "###-##-####" takes 9 characters, the value has 4`},
	}
	for _, tt := range tests {
		if _, err := BindInputs(l.Capability, tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	plain, err := Parse("plain.yaml", []byte(strings.ReplaceAll(shapedInputs, "    transform: [lower]\n", "")))
	if err != nil {
		t.Fatal(err)
	}
	h1, err1 := Hash(l.Capability)
	h2, err2 := Hash(plain.Capability)
	if err1 != nil || err2 != nil || h1 == h2 {
		t.Errorf("hash with a transform %s (%v), without %s (%v): want two hashes", h1, err1, h2, err2)
	}
	canon, err := Canonical(l.Capability)
	if err != nil || !strings.Contains(string(canon), `"transform":["digits_only",{"format":"###-##-####"}]`) {
		t.Errorf("canonical form %s (%v) lost the transforms", canon, err)
	}
}
