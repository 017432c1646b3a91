package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/replay"
)

const signOnFile = "../../examples/capabilities/corebank.auth.sign_on.yaml"

// variant seals a copy of the capability file from with the edits (old,
// new pairs) applied and its declared hash dropped, and returns its bytes.
func variant(t *testing.T, from string, edits ...string) []byte {
	t.Helper()
	text := string(readFile(t, from))
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("%s has no %q", from, edits[i])
		}
		text = strings.ReplaceAll(text, edits[i], edits[i+1])
	}
	path := filepath.Join(t.TempDir(), "variant.yaml")
	if err := os.WriteFile(path, []byte(unsealed(text)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatal(err)
	}
	return readFile(t, path)
}

// unsealed is text without its top-level content_hash line.
func unsealed(text string) string {
	return strings.Join(slicesDelete(strings.Split(text, "\n"), "content_hash: sha256"), "\n")
}

// TestApprovalCoversThePinnedClosure: a transfer approved in the catalog
// keeps running the sign-on it pins after a newer sign-on is added (a bare
// id would resolve to the newer one); a root that names a bare id, or an
// id@version without its hash, is refused by catalog add before anything
// runs.
func TestApprovalCoversThePinnedClosure(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	signOn := tb.add(t, readFile(t, signOnFile))
	tb.add(t, readFile(t, "../../examples/capabilities/memberdesk.transfer_history.yaml"))
	transfer := tb.add(t, readFile(t, transferFile))
	root, _, err := tb.cat.Resolve(tb.ctx, transfer.Ref())
	if err != nil {
		t.Fatal(err)
	}
	tb.evals(t, root, 5)
	if _, err := tb.cat.Approve(tb.ctx, transfer.Ref(), catalog.ApproveParams{FromEval: true}); err != nil {
		t.Fatal(err)
	}
	newer := tb.add(t, variant(t, signOnFile, "version: 1.0.0", "version: 1.0.1"))
	lib := tb.cat.Library(tb.ctx)
	if l, err := lib.Lookup("corebank.auth.sign_on"); err != nil || l.Hash != newer.ContentHash {
		t.Fatalf("the catalog's newest sign-on is %v, %v; want 1.0.1", l, err)
	}
	if err := replay.Preflight(root, lib); err != nil {
		t.Fatalf("Preflight of the approved transfer: %v", err)
	}
	for _, c := range capability.Calls(root.Capability) {
		if !strings.HasPrefix(c.Ref, "corebank.auth.sign_on") {
			continue // the effect contract's read-back
		}
		sub, err := replay.Resolve(lib, c.Ref, c.Pin)
		if err != nil || sub.Hash != signOn.ContentHash {
			t.Errorf("%s runs %v, %v; want the approved sign-on 1.0.0 (%s)", c.Field, sub, err, signOn.ContentHash)
		}
	}

	pinned := string(readFile(t, transferFile))
	pin := "    content_hash: " + signOn.ContentHash + "\n"
	tests := []struct {
		name  string
		edits []string
		want  string
	}{
		{"bare id", []string{"corebank.auth.sign_on@1.0.0\n" + pin, "corebank.auth.sign_on\n"},
			`prerequisites[0].capability: "corebank.auth.sign_on" is not pinned: want id@version with content_hash`},
		{"id@version without content_hash", []string{"corebank.auth.sign_on@1.0.0\n" + pin, "corebank.auth.sign_on@1.0.0\n"},
			`recovery[0].capability: "corebank.auth.sign_on@1.0.0" is not pinned`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(pinned, tt.edits[0]) {
				t.Fatalf("the transfer has no %q", tt.edits[0])
			}
			data := variant(t, transferFile, append([]string{"version: 1.3.0", "version: 1.4.0"}, tt.edits...)...)
			_, err := tb.cat.Add(tb.ctx, "bare.yaml", data)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "bare.yaml") {
				t.Fatalf("Add = %v, want a refusal naming bare.yaml and %q", err, tt.want)
			}
			if vs, _ := tb.cat.List(tb.ctx, "memberdesk.transfer_funds"); len(vs) != 1 {
				t.Errorf("the refused root was stored: %d versions", len(vs))
			}
		})
	}
}

// TestDiffShowsAPinChange: a new transfer version that pins a riskier
// sign-on shows both pins changing, marked [risk up].
func TestDiffShowsAPinChange(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	old := tb.add(t, readFile(t, signOnFile))
	tb.add(t, readFile(t, transferFile))
	riskier := tb.add(t, variant(t, signOnFile, "version: 1.0.0", "version: 1.0.2", "risk: safe", "risk: elevated"))
	tb.add(t, variant(t, transferFile, "version: 1.3.0", "version: 1.4.0",
		"corebank.auth.sign_on@1.0.0", "corebank.auth.sign_on@1.0.2", old.ContentHash, riskier.ContentHash))
	changes, err := tb.cat.DiffRefs(tb.ctx, "memberdesk.transfer_funds@1.3.0", "memberdesk.transfer_funds@1.4.0")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]catalog.Change{}
	for _, c := range changes {
		got[c.Path] = c
	}
	for _, p := range []string{"prerequisites[corebank.auth.sign_on].content_hash", "recovery[session_expired].content_hash"} {
		c, ok := got[p]
		if !ok || c.Kind != catalog.Changed || !c.RiskUp || !strings.Contains(c.String(), riskier.ContentHash) {
			t.Errorf("%s: %v, want a changed pin to %s marked [risk up]; changes: %v", p, c, riskier.ContentHash, changes)
		}
	}
	if c := got["prerequisites[corebank.auth.sign_on].capability"]; c.Kind != catalog.Changed || c.RiskUp {
		t.Errorf("prerequisite reference change %v, want corebank.auth.sign_on@1.0.0 -> @1.0.2 (the pin carries the risk)", c)
	}
	// The same pin change to a sign-on of the same risk is shown, not marked.
	same := tb.add(t, variant(t, signOnFile, "version: 1.0.0", "version: 1.0.3", "title: Sign on to MemberDesk", "title: Sign on"))
	tb.add(t, variant(t, transferFile, "version: 1.3.0", "version: 1.5.0",
		"corebank.auth.sign_on@1.0.0", "corebank.auth.sign_on@1.0.3", old.ContentHash, same.ContentHash))
	changes, err = tb.cat.DiffRefs(tb.ctx, "memberdesk.transfer_funds@1.3.0", "memberdesk.transfer_funds@1.5.0")
	if err != nil {
		t.Fatal(err)
	}
	pins := 0
	for _, c := range changes {
		if !strings.HasSuffix(c.Path, ".content_hash") {
			continue
		}
		pins++
		if c.RiskUp {
			t.Errorf("%s marked [risk up] for a sign-on of the same risk", c)
		}
	}
	if pins != 2 {
		t.Errorf("%d pin changes, want 2: %v", pins, changes)
	}
}
