package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/store"
)

// screenOnlyTransfer is the reference transfer as version with every
// effects block taken out, sealed: its submit and confirm are then proven
// only by the screen.
func screenOnlyTransfer(t *testing.T, version string) []byte {
	t.Helper()
	var out []string
	indent := -1
	for _, line := range strings.Split(string(readFile(t, transferFile)), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		depth := len(line) - len(trimmed)
		if indent >= 0 && (trimmed == "" || depth > indent) {
			continue
		}
		indent = -1
		switch {
		case strings.HasPrefix(trimmed, "effects:"):
			indent = depth
			continue
		case strings.HasPrefix(line, "content_hash:"):
			continue
		case strings.HasPrefix(line, "version:"):
			line = "version: " + version
		}
		out = append(out, line)
	}
	path := filepath.Join(t.TempDir(), "screen-only.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatal(err)
	}
	return readFile(t, path)
}

// TestApproveRefusesScreenOnlyWrite (issue 26: contracts are expected): a
// capability whose irreversible steps declare no effect contract is
// refused without --accept-screen-only, naming the steps, and nothing is
// written; with a reason it is approved and the note records it beside
// the approver's note and an identity acceptance; a blank reason is
// refused; the flag is refused on the reference transfer (its confirm
// has a contract) and on a lookup with no irreversible step.
func TestApproveRefusesScreenOnlyWrite(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	tb.add(t, screenOnlyTransfer(t, "1.9.2"))
	tb.add(t, readFile(t, "../../examples/capabilities/memberdesk.savings_balance.yaml"))
	inputs := map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "900"}
	once := func(ref, accept, note string) error {
		_, err := tb.cat.Approve(tb.ctx, ref, catalog.ApproveParams{Once: true, AcceptScreenOnly: accept, Note: note, Inputs: inputs})
		return err
	}
	err := once("memberdesk.transfer_funds@1.9.2", "", "ticket 7")
	if err == nil || !strings.Contains(err.Error(), `irreversible steps "submit", "confirm" with no effect contract`) ||
		!strings.Contains(err.Error(), "--accept-screen-only REASON") {
		t.Fatalf("screen-only write approved without acceptance: err %v", err)
	}
	if err := once("memberdesk.transfer_funds@1.9.2", " \t", ""); err == nil || !strings.Contains(err.Error(), "--accept-screen-only needs a reason") {
		t.Errorf("blank --accept-screen-only: err %v, want a reason asked for", err)
	}
	if all, err := tb.st.ListApprovals(tb.ctx, store.ApprovalFilter{}); err != nil || len(all) != 0 {
		t.Fatalf("refusals wrote approvals: %v %v", all, err)
	}
	a, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.9.2", catalog.ApproveParams{Once: true, Inputs: inputs, Note: "ticket 7",
		AcceptScreenOnly: "MemberDesk has no history screen in this tenant"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Note != "ticket 7; effects screen-only: accepted: MemberDesk has no history screen in this tenant" {
		t.Errorf("note %q does not record the acceptance", a.Note)
	}
	if err := once("memberdesk.transfer_funds@1.9.2", "again", ""); err != nil {
		t.Errorf("second acceptance without a note: %v", err)
	}
	if err := once("memberdesk.transfer_funds@1.3.0", "no reason to", ""); err == nil || !strings.Contains(err.Error(), "nothing to accept") {
		t.Errorf("--accept-screen-only on the contracted reference: err %v, want refused", err)
	}
	if a, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.3.0", catalog.ApproveParams{Once: true, Inputs: inputs}); err != nil || a.Note != "" {
		t.Errorf("contracted reference: %v, note %q", err, a.Note)
	}
	_, err = tb.cat.Approve(tb.ctx, "memberdesk.savings_balance", catalog.ApproveParams{Once: true, Inputs: map[string]string{"member_id": "12345"},
		AcceptScreenOnly: "nothing written"})
	if err == nil || !strings.Contains(err.Error(), "nothing to accept") {
		t.Errorf("--accept-screen-only on a lookup: err %v, want refused", err)
	}
}
