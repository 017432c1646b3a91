package catalog_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/catalog"
)

// unarmedTransfer is the reference transfer as version with its identity
// check (the member number on Transfer Complete) taken out and extra
// before its provenance, sealed.
func unarmedTransfer(t *testing.T, version, extra string) []byte {
	t.Helper()
	check := func(indent string) string {
		return indent + "- node_exists:\n" + indent + "    role: cell\n" + indent + "    name: \"{input.member_id}\"\n" +
			indent + "    anchor: {relation: row_of, text: Member number}\n" + indent + "    scope: {frame: content}\n"
	}
	return variant(t, transferFile, "version: 1.3.0", "version: "+version, check("        "), "", check("      "), "",
		"provenance:\n", extra+"provenance:\n")
}

// TestApproveRefusesUnarmedRead (invariant 23): a capability that reads a
// record with no check that it is the one asked for, and does not say so,
// is refused without --accept-unarmed and approved with it, the reason
// recorded in the note; one that declares identity: unarmed is approved
// with its reason recorded; an acceptance of an armed capability is
// refused.
func TestApproveRefusesUnarmedRead(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	tb.add(t, unarmedTransfer(t, "1.9.0", ""))
	once := func(accept, note string) catalog.ApproveParams {
		return catalog.ApproveParams{Once: true, AcceptUnarmed: accept, Note: note,
			Inputs: map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "900"}}
	}
	_, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.9.0", once("", "ticket 42"))
	if err == nil || !strings.Contains(err.Error(), "confirmation (step read_confirmation)") || !strings.Contains(err.Error(), "--accept-unarmed REASON") {
		t.Fatalf("unarmed read approved without acceptance: err %v", err)
	}
	if _, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.9.0", once("   ", "")); err == nil || !strings.Contains(err.Error(), "needs a reason") {
		t.Errorf("blank --accept-unarmed: err %v, want a reason asked for", err)
	}
	a, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.9.0", once("the ledger read-back checks the member", "ticket 42"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Note != "ticket 42; identity unarmed: accepted: the ledger read-back checks the member" {
		t.Errorf("note %q does not record the acceptance", a.Note)
	}
	if _, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.3.0", once("no reason to", "")); err == nil || !strings.Contains(err.Error(), "nothing to accept") {
		t.Errorf("--accept-unarmed on the armed reference: err %v, want refused", err)
	}
	if a, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.3.0", once("", "")); err != nil || a.Note != "" {
		t.Errorf("armed reference: %v, note %q", err, a.Note)
	}

	tb.add(t, unarmedTransfer(t, "1.9.1", "identity:\n  unarmed: The confirmation page names no member.\n"))
	a, err = tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds@1.9.1", once("", ""))
	if err != nil {
		t.Fatalf("declared unarmed read refused: %v", err)
	}
	if a.Note != "identity unarmed: declared: The confirmation page names no member." {
		t.Errorf("note %q does not record the declared choice", a.Note)
	}
}
