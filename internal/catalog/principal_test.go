package catalog_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/store"
)

// TestApproverIsAPrincipal: Approve and RevokeBy record only a principal's
// String form, so no control character or forged text reaches the
// approvals table; catalog show prints who revoked.
func TestApproverIsAPrincipal(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.add(t, readFile(t, transferFile))
	once := func(approver string) catalog.ApproveParams {
		return catalog.ApproveParams{Once: true, Approver: approver,
			Inputs: map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "10.00"}}
	}
	forged := "mallory\n  ap-x  revoked 2026-01-01T00:00:00Z by security"
	for _, bad := range []string{forged, "\x1b[31mroot", "Alice", "demo reviewer", "root@host", "a (unverified)\n"} {
		if _, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds", once(bad)); err == nil || !strings.Contains(err.Error(), "approver") {
			t.Errorf("Approve as %q: %v, want a refusal naming the approver", bad, err)
		}
	}
	if all, _ := tb.st.ListApprovals(tb.ctx, store.ApprovalFilter{}); len(all) != 0 {
		t.Fatalf("refused approvers were stored: %+v", all)
	}
	a, err := tb.cat.Approve(tb.ctx, "memberdesk.transfer_funds", once("root@host (unverified)"))
	if err != nil || a.Approver != "root@host (unverified)" {
		t.Fatalf("Approve as an unverified user = %+v, %v", a, err)
	}
	if _, err := tb.cat.RevokeBy(tb.ctx, a.ID, forged); err == nil || !strings.Contains(err.Error(), "revoked by") {
		t.Fatalf("RevokeBy a forged name: %v, want a refusal naming revoked by", err)
	}
	if got, _ := tb.st.GetApproval(tb.ctx, a.ID); !got.RevokedAt.IsZero() {
		t.Fatal("a refused revocation revoked the approval")
	}
	r, err := tb.cat.RevokeBy(tb.ctx, a.ID, "bob")
	if err != nil || r.RevokedBy != "bob" {
		t.Fatalf("RevokeBy bob = %+v, %v", r, err)
	}
	if r, _ := tb.cat.Revoke(tb.ctx, a.ID); r.RevokedBy != "bob" {
		t.Fatalf("a second revocation replaced the revoker: %q", r.RevokedBy)
	}
	d, err := tb.cat.Show(tb.ctx, "memberdesk.transfer_funds")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := catalog.WriteDetail(&out, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "revoked 2026-03-01T09:00:00Z by bob  by root@host (unverified)") {
		t.Fatalf("catalog show does not name the revoker and approver:\n%s", out.String())
	}
	// A free-text approver stored before principals existed is shown quoted:
	// it can never print a line of its own.
	legacy := store.Approval{ID: "ap-legacy", CapabilityID: a.CapabilityID, Version: a.Version, ContentHash: a.ContentHash,
		Approver: forged, Once: true, Inputs: a.Inputs}
	if _, err := tb.st.AddApproval(tb.ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if d, err = tb.cat.Show(tb.ctx, "memberdesk.transfer_funds"); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := catalog.WriteDetail(&out, d); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\n  ap-x") || !strings.Contains(out.String(), `by "mallory\n  ap-x`) {
		t.Fatalf("a legacy approver with a newline printed raw:\n%s", out.String())
	}
	out.Reset()
	if err := catalog.WriteRevoked(&out, r); err != nil || !strings.HasSuffix(out.String(), " by bob\n") {
		t.Fatalf("WriteRevoked = %q, %v; want it to end by bob", out.String(), err)
	}
}
