package capability_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
)

// transferDraft is the reference transfer (its sealed example, pins and
// content hash dropped from its effect contract and from the file).
func transferDraft(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../examples/capabilities/memberdesk.transfer_funds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := unsealed(string(raw))
	text = strings.Replace(text, "via: memberdesk.transfer_history@1.0.0\n", "via: memberdesk.transfer_history\n", 1)
	var kept []string
	for _, line := range strings.SplitAfter(text, "\n") {
		if !strings.HasPrefix(line, "          content_hash:") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}

// TestEffectContractValidation: a contract is refused, naming the field,
// on a safe step, with a secret, with an undeclared input or output, with
// an $output among the read-back's inputs, with a negative count, with no
// match, and when it reads back with the capability itself.
func TestEffectContractValidation(t *testing.T) {
	t.Parallel()
	base := transferDraft(t)
	if _, err := capability.Parse("draft.yaml", []byte(base)); err != nil {
		t.Fatalf("the reference transfer's contract: %v", err)
	}
	tests := []struct{ name, old, new, want string }{
		{"safe step", "    risk: irreversible\n    checkpoint: true\n", "    checkpoint: true\n",
			"steps[7].effects[0]: an effect contract is only allowed on an elevated or irreversible step"},
		{"secret", "Amount: {$input: amount}", "Amount: {$secret: pin}", "a secret cannot be part of an effect contract"},
		{"undeclared input", "From: {$input: from_account}", "From: {$input: from}", `match.From.$input: undeclared input "from"`},
		{"undeclared output", "From: {$input: from_account}", "From: {$output: reference}", `match.From.$output: undeclared output "reference"`},
		{"output as read-back input", "inputs: {member_id: {$input: member_id}}", "inputs: {member_id: {$output: confirmation}}",
			"inputs.member_id.$output: a read-back's inputs are known before the run"},
		{"negative count", "count: 1", "count: -1", "count"},
		{"no match", "          match:\n            From: {$input: from_account}\n            To: {$input: to_account}\n            Amount: {$input: amount}\n",
			"          match: {}\n", "match"},
		{"itself", "via: memberdesk.transfer_history\n", "via: memberdesk.transfer_funds\n", "cannot read its effect back with itself"},
		{"range version", "via: memberdesk.transfer_history\n", "via: memberdesk.transfer_history@^1.0\n", "via"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(base, tt.old) {
				t.Fatalf("%q not in the draft", tt.old)
			}
			_, err := capability.Parse("draft.yaml", []byte(strings.Replace(base, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestSealPinsReadBack: sealing a draft whose contract names its read-back
// by bare id writes id@version and its content hash, like a prerequisite;
// CheckPinned refuses the sealed text without that pin, naming the field;
// and the content hash covers the contract (changing count changes it).
func TestSealPinsReadBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"corebank.auth.sign_on.yaml", "memberdesk.transfer_history.yaml"} {
		copyFile(t, filepath.Join("../../examples/capabilities", name), filepath.Join(dir, name))
	}
	history, err := capability.Load(filepath.Join(dir, "memberdesk.transfer_history.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lib := map[string]*capability.Loaded{history.Capability.ID: history, history.Capability.Ref(): history}
	resolve := func(ref, pin string) (*capability.Loaded, error) {
		if l, ok := lib[ref]; ok && (pin == "" || pin == l.Hash) {
			return l, nil
		}
		if pin != "" && strings.HasPrefix(ref, "corebank.auth.sign_on") {
			return capability.Load(filepath.Join(dir, "corebank.auth.sign_on.yaml"))
		}
		return nil, os.ErrNotExist
	}
	path := filepath.Join(dir, "transfer.yaml")
	if err := os.WriteFile(path, []byte(transferDraft(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	hash, err := capability.SealPinned(path, resolve)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "          via: memberdesk.transfer_history@1.0.0\n          content_hash: " + history.Hash + "\n"
	if !strings.Contains(string(out), want) {
		t.Fatalf("sealed text lacks the pin %q:\n%s", want, out)
	}
	ref, err := os.ReadFile("../../examples/capabilities/memberdesk.transfer_funds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(ref) {
		t.Errorf("sealing the draft did not reproduce the example byte for byte")
	}
	unpinned := strings.Replace(unsealed(string(out)), "          content_hash: "+history.Hash+"\n", "", 1)
	l, err := capability.Parse("x.yaml", []byte(unpinned))
	if err != nil {
		t.Fatal(err)
	}
	if err := capability.CheckPinned(l.Capability); err == nil ||
		!strings.Contains(err.Error(), `steps[7].effects[0].record_written.via: "memberdesk.transfer_history@1.0.0" is not pinned`) {
		t.Fatalf("CheckPinned = %v, want the unpinned read-back named", err)
	}
	other, err := capability.Parse("x.yaml", []byte(strings.Replace(unsealed(string(out)), "count: 1", "count: 2", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if other.Hash == hash {
		t.Errorf("the content hash %s does not cover the effect contract's count", hash)
	}
}

// TestReadOnlyProblem: the reference read-back is read-only; the transfer,
// a typing step, a click on a button and a prerequisite are not.
func TestReadOnlyProblem(t *testing.T) {
	t.Parallel()
	history, err := capability.Load("../../examples/capabilities/memberdesk.transfer_history.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p := capability.ReadOnlyProblem(history.Capability); p != "" {
		t.Fatalf("the reference read-back is refused: %s", p)
	}
	transfer, err := capability.Parse("t.yaml", []byte(transferDraft(t)))
	if err != nil {
		t.Fatal(err)
	}
	if p := capability.ReadOnlyProblem(transfer.Capability); !strings.Contains(p, "irreversible") {
		t.Errorf("the transfer: %q, want its risk named", p)
	}
	c := *history.Capability
	c.Steps = append(c.Steps[:0:0], c.Steps...)
	c.Steps[0].Action = "type"
	if p := capability.ReadOnlyProblem(&c); !strings.Contains(p, "step show_history types") {
		t.Errorf("a typing step: %q", p)
	}
	c.Steps[0].Action = "click"
	if p := capability.ReadOnlyProblem(&c); !strings.Contains(p, "clicks something other than a link") {
		t.Errorf("a click without a link target: %q", p)
	}
	c.Steps[0].Action = "wait_for"
	c.Prerequisites = transfer.Capability.Prerequisites
	if p := capability.ReadOnlyProblem(&c); !strings.Contains(p, "runs other capabilities") {
		t.Errorf("a prerequisite: %q", p)
	}
}
