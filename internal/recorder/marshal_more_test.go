package recorder

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/capability"
)

// TestMarshalConstructs writes a capability holding every construct added
// after the first writer (list inputs of strings and of objects, loops with
// $item values and optional inner steps, input transforms, an effect
// contract with literal, $input and $output values, identity) and loads it
// back with the same hash, then writes that again byte for byte.
func TestMarshalConstructs(t *testing.T) {
	t.Parallel()
	l, err := capability.Load(filepath.Join("testdata", "marshal_constructs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := Marshal(l.Capability, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := capability.Parse("constructs.yaml", data)
	if err != nil {
		t.Fatalf("%s\n%v", data, err)
	}
	if back.Hash != l.Hash {
		t.Errorf("written hash %s, loaded %s:\n%s", back.Hash, l.Hash, data)
	}
	for _, want := range []string{
		"transform: [trim, digits_only, {format: \"##-###\"}]",
		"items: {type: string}",
		"properties:\n",
		"value: {$item: row.qty}",
		"for_each:\n      input: items\n      as: item\n",
		"effects:\n      - record_written:\n",
		"\"Kind: entry\": kept",
		"Status: {$output: saved}",
		"identity:\n  unarmed:",
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("written file lacks %q:\n%s", want, data)
		}
	}
	again, err := Marshal(back.Capability, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, data) {
		t.Errorf("second write differs:\n%s\n---\n%s", again, data)
	}
}
