package recorder

import (
	"testing"

	"github.com/cuahq/cua/internal/capability"
)

// TestMarshalStartsWithEndsWith writes names given as a starts_with /
// ends_with pair, in a step and in a predicate, and loads them back with
// the same hash: the pair is not lost as an empty name.
func TestMarshalStartsWithEndsWith(t *testing.T) {
	t.Parallel()
	src := `schema_version: 1
id: test.pair
version: 1.0.0
title: Pick a payee by a start and an end
surface: web
entrypoint: {url_pattern: "{base_url}/"}
inputs:
  - {name: first, type: string}
steps:
  - id: pick
    action: click
    target: {role: button, name: {starts_with: "Pay {input.first}", ends_with: "Lee"}}
    postcondition:
      node_exists: {role: heading, name: {ends_with: "{input.first}", match: normalized}}
`
	l, err := capability.Parse("pair.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	data, err := Marshal(l.Capability, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := capability.Parse("pair.yaml", data)
	if err != nil {
		t.Fatalf("%s\n%v", data, err)
	}
	if back.Hash != l.Hash {
		t.Errorf("written hash %s, read %s:\n%s", back.Hash, l.Hash, data)
	}
	if n := back.Capability.Steps[0].Target.Name; n.StartsWith != "Pay {input.first}" || n.EndsWith != "Lee" {
		t.Errorf("pair written back as %+v:\n%s", n, data)
	}
}
