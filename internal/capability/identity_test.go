package capability

import (
	"path/filepath"
	"strings"
	"testing"
)

// loadEdited parses testdata/base.yaml (a lookup that types member_id,
// clicks Search and reads a balance with no identity check) after the
// edits (old, new pairs) and appends extra.
func loadEdited(t *testing.T, extra string, edits ...string) *Loaded {
	t.Helper()
	text := mustRead(t, "testdata/base.yaml")
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("%q not in base.yaml", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	l, err := Parse("edited.yaml", []byte(text+extra))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestUnarmedReads: a read from a screen showing a record is armed by a
// predicate that depends on an input on the reading step, on the action
// that brought its screen, or in the checkpoint; a check made before that
// action, a negated one or one an any_of can skip does not arm it; a
// capability that declares identity: unarmed, or asks for no record, has
// none to report.
func TestUnarmedReads(t *testing.T) {
	t.Parallel()
	const goStep = "    target: {role: button, name: Search}\n"
	const readStep = "    into: balance\n"
	heading := "{node_exists: {role: heading, name: \"Member {input.member_id}\"}}"
	for _, tt := range []struct {
		name  string
		extra string
		edits []string
		want  int
	}{
		{"no check", "", nil, 1},
		{"postcondition of the action", "", []string{goStep, goStep + "    postcondition: " + heading + "\n"}, 0},
		{"precondition of the read", "", []string{readStep, readStep + "    precondition: " + heading + "\n"}, 0},
		{"all_of member", "", []string{goStep, goStep + "    postcondition: {all_of: [{node_exists: {role: heading, name: Details}}, " + heading + "]}\n"}, 0},
		{"checkpoint", "checkpoint:\n  when: " + heading + "\n", nil, 0},
		{"checkpoint text", "checkpoint:\n  when: {text_present: {text: \"Member {input.member_id}\"}}\n", nil, 0},
		{"$input name", "", []string{goStep, goStep + "    postcondition: {node_exists: {role: cell, name: {$input: member_id}, anchor: {relation: row_of, text: Member number}}}\n"}, 0},
		{"before the action that changed the screen", "", []string{"    value: {$input: member_id}\n",
			"    value: {$input: member_id}\n    postcondition: {node_has_value: {target: {role: textbox, name: Member number}, value: {$input: member_id}}}\n"}, 1},
		{"negated", "", []string{goStep, goStep + "    postcondition: {not: " + heading + "}\n"}, 1},
		{"any_of with an escape", "", []string{goStep, goStep + "    postcondition: {any_of: [{node_exists: {role: heading, name: Details}}, " + heading + "]}\n"}, 1},
		{"declared unarmed", "identity:\n  unarmed: The page names no member.\n", nil, 0},
		{"asks for no record", "", []string{"    pattern: \"[0-9]{5}\"\n", "    pattern: \"[0-9]{5}\"\n    sensitive: true\n"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := loadEdited(t, tt.extra, tt.edits...)
			got := UnarmedReads(l.Capability)
			if len(got) != tt.want {
				t.Fatalf("unarmed reads %v, want %d", got, tt.want)
			}
			if tt.want == 1 && (got[0].Step != "read_balance" || got[0].Output != "balance" || got[0].Path != "steps[2]") {
				t.Errorf("unarmed read %+v, want read_balance into balance at steps[2]", got[0])
			}
			lint := l.Lint()
			if len(lint) != tt.want {
				t.Fatalf("lint %v, want %d problems", lint, tt.want)
			}
			if tt.want == 1 && (lint[0].Path != "steps[2]" || lint[0].Line <= 0 || !strings.Contains(lint[0].Message, "identity: {unarmed: REASON}")) {
				t.Errorf("lint problem %+v: want steps[2] with a line, naming identity: {unarmed: REASON}", lint[0])
			}
		})
	}
}

// TestIdentityDeclaration: identity: {unarmed: REASON} parses, is part of
// the content hash, and a blank reason or another key is refused.
func TestIdentityDeclaration(t *testing.T) {
	t.Parallel()
	plain := loadEdited(t, "")
	declared := loadEdited(t, "identity:\n  unarmed: The page names no member.\n")
	if got := IdentityUnarmed(declared.Capability); got != "The page names no member." {
		t.Errorf("IdentityUnarmed = %q", got)
	}
	if IdentityUnarmed(plain.Capability) != "" {
		t.Error("IdentityUnarmed of a capability that declares nothing is not empty")
	}
	if plain.Hash == declared.Hash {
		t.Error("the identity declaration does not change the content hash")
	}
	canon, err := Canonical(declared.Capability)
	if err != nil || !strings.Contains(string(canon), `"identity":{"unarmed":"The page names no member."}`) {
		t.Errorf("canonical JSON lacks the declaration: %s %v", canon, err)
	}
	for _, bad := range []string{"identity:\n  unarmed: \"\"\n", "identity:\n  unarmed: \"  \"\n", "identity:\n  armed: true\n", "identity: unarmed\n"} {
		if _, err := Parse("bad.yaml", []byte(mustRead(t, "testdata/base.yaml")+bad)); err == nil || !strings.Contains(err.Error(), "identity") {
			t.Errorf("%q: err %v, want a problem at identity", bad, err)
		}
	}
}

// TestReferenceCapabilitiesArmed: every reference capability that reads a
// record checks whose it is (or says why not).
func TestReferenceCapabilitiesArmed(t *testing.T) {
	t.Parallel()
	for _, f := range exampleFiles(t) {
		l, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if reads := UnarmedReads(l.Capability); len(reads) > 0 {
			t.Errorf("%s: %v", filepath.Base(f), reads)
		}
	}
	for _, name := range []string{"memberdesk.savings_balance", "memberdesk.transfer_funds"} {
		l, err := Load(filepath.Join(examples, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !ChecksIdentity(l.Capability) || IdentityUnarmed(l.Capability) != "" {
			t.Errorf("%s: not armed by a predicate", name)
		}
	}
}
