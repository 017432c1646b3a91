package capability_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
)

// TestSealPinned: seal writes each sub-capability's content hash beside its
// reference, in block and flow style, keeps the rest of the text, and the
// pins are part of the sealed content.
func TestSealPinned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	signon := filepath.Join(dir, "signon.yaml")
	copyFile(t, "../../examples/capabilities/corebank.auth.sign_on.yaml", signon)
	sub, err := capability.Load(signon)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(ref string) (*capability.Loaded, error) {
		if ref == "corebank.auth.sign_on" || ref == "corebank.auth.sign_on@1.0.0" {
			return sub, nil
		}
		return nil, errors.New("not in the library")
	}
	src, err := os.ReadFile("../../examples/capabilities/memberdesk.savings_balance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	draft := strings.Replace(string(src), "version: 1.0.0", "version: 1.1.0", 1)
	draft = draft[:strings.Index(draft, "content_hash:")]
	// One prerequisite in flow style, the remedy in block style.
	draft = strings.Replace(draft, "  - capability: corebank.auth.sign_on\n    when:\n      node_exists: {role: button, name: Sign on, scope: {frame: content}}\n",
		"  - {capability: corebank.auth.sign_on@1.0.0, when: {node_exists: {role: button, name: Sign on, scope: {frame: content}}}}\n", 1)
	path := filepath.Join(dir, "lookup.yaml")
	if err := os.WriteFile(path, []byte(draft), 0o600); err != nil {
		t.Fatal(err)
	}
	hash, err := capability.SealPinned(path, resolve)
	if err != nil {
		t.Fatalf("SealPinned: %v", err)
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Hash != hash || !l.Sealed {
		t.Fatalf("sealed %s, loaded %s (sealed=%v)", hash, l.Hash, l.Sealed)
	}
	if got := l.Capability.Prerequisites[0].ContentHash; got != sub.Hash {
		t.Errorf("prerequisite pin %q, want %s", got, sub.Hash)
	}
	for _, r := range l.Capability.Recovery {
		if r.Capability != "" && r.ContentHash != sub.Hash {
			t.Errorf("remedy %s pin %q, want %s", r.ID, r.ContentHash, sub.Hash)
		}
		if r.Capability == "" && r.ContentHash != "" {
			t.Errorf("reload remedy %s was pinned", r.ID)
		}
	}
	text, _ := os.ReadFile(path)
	if !strings.Contains(string(text), "# The reference lookup") {
		t.Error("the comments were lost")
	}
	// A missing sub-capability refuses the seal and leaves the file as it was.
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte(draft), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = capability.SealPinned(other, func(string) (*capability.Loaded, error) { return nil, errors.New("not in the library") })
	if err == nil || !strings.Contains(err.Error(), "prerequisites[0].capability: corebank.auth.sign_on@1.0.0: not in the library") {
		t.Fatalf("SealPinned with nothing to resolve = %v, want the field named", err)
	}
	if after, _ := os.ReadFile(other); string(after) != draft {
		t.Error("a refused seal changed the file")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
