package mockapp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

// Effect contracts on real Chromium (issue 26): the reference transfer
// (1.3.0) declares that its confirm step leaves exactly one new entry
// (from, to, amount as asked) in the member's Transfer History and nothing
// else, read back by memberdesk.transfer_history. Under every write fault
// the ledger (GET /_control/ledger) is the judge: a run may end SUCCESS
// only when the ledger holds exactly the transfer asked for.

// contractInputs moves an amount with cents, so partial_save's truncation
// shows in the ledger.
var contractInputs = map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.75"}

// ledgerRight reports whether the ledger holds exactly one entry, the
// transfer of contractInputs.
func ledgerRight(ledger []mockapp.LedgerEntry) bool {
	return len(ledger) == 1 && ledger[0].Kind == "transfer" && ledger[0].Member == contractInputs["member_id"] &&
		ledger[0].From == contractInputs["from_account"] && ledger[0].To == contractInputs["to_account"] && ledger[0].Amount == contractInputs["amount"]
}

// TestEffectContractsAgainstWriteFaults runs the reference transfer with
// its effect contract against each write fault and a no-fault control:
// no run ends SUCCESS while the ledger disagrees (0 silent wrong effects);
// each fault ends as its row says, with the confirm step's verdict; the
// control ends SUCCESS with the effect verified.
func TestEffectContractsAgainstWriteFaults(t *testing.T) {
	rows := []struct {
		fault   string
		status  domain.RunStatus
		code    domain.FailureCode
		verdict domain.Effect
	}{
		{"", domain.StatusSuccess, "", domain.EffectVerified},
		{mockapp.FaultPartialSave, domain.StatusFailed, domain.CodeEffectRefuted, domain.EffectRefuted},
		{mockapp.FaultDuplicateSubmit, domain.StatusFailed, domain.CodeEffectRefuted, domain.EffectRefuted},
		{mockapp.FaultOptimisticThenReject, domain.StatusFailed, domain.CodeEffectRefuted, domain.EffectRefuted},
		{mockapp.FaultStaleOverwrite, domain.StatusFailed, domain.CodeEffectRefuted, domain.EffectRefuted},
		{mockapp.FaultTimeoutAfterWrite, domain.StatusNeedsHuman, "", domain.EffectVerified},
		{mockapp.FaultLostWrite, domain.StatusFailed, domain.CodeEffectRefuted, domain.EffectRefuted},
		{mockapp.FaultResetAfterWrite, domain.StatusFailed, domain.CodeEffectRefuted, domain.EffectRefuted},
	}
	transfer := loadCap(t, "memberdesk.transfer_funds")
	if len(transfer.Capability.Contracts()) != 1 {
		t.Fatalf("the reference transfer declares %d effect contracts, want 1", len(transfer.Capability.Contracts()))
	}
	var table []string
	silent := 0
	for _, row := range rows {
		name := row.fault
		if name == "" {
			name = "no_fault"
		}
		t.Run(name, func(t *testing.T) {
			f := setupFaultRun(t)
			if row.fault != "" {
				f.arm(t, row.fault)
			}
			rec := f.run(t, transfer, contractInputs, []string{"submit"})
			ledger, err := getLedger(f.ctx, f.app.URL())
			if err != nil {
				t.Fatal(err)
			}
			verdict, evidence := confirmVerdict(rec)
			right := ledgerRight(ledger)
			table = append(table, fmt.Sprintf("%-22s %-11s %-14s verdict=%-13s ledger_right=%-5v entries=%d", name, rec.Status, rec.FailureCode, verdict, right, len(ledger)))
			t.Logf("%s: %s %s: %s [%s]", name, rec.Status, rec.FailureCode, rec.Message, evidence)
			if rec.Status == domain.StatusSuccess && !right {
				silent++
				t.Errorf("SILENT WRONG EFFECT: SUCCESS while the ledger holds %+v", ledger)
			}
			if rec.Status != row.status || (row.code != "" && rec.FailureCode != row.code) || verdict != row.verdict {
				t.Errorf("ended %s %s with verdict %q, want %s %s with %q", rec.Status, rec.FailureCode, verdict, row.status, row.code, row.verdict)
			}
			if row.verdict == domain.EffectRefuted && !strings.HasPrefix(rec.Message, "EFFECT REFUTED: step confirm: ") {
				t.Errorf("message %q does not lead with the refutation", rec.Message)
			}
			if row.fault == mockapp.FaultTimeoutAfterWrite && !strings.HasPrefix(rec.Message, "EFFECT VERIFIED in the system of record: step confirm") {
				t.Errorf("message %q does not say the unconfirmed effect is verified", rec.Message)
			}
			if strings.Contains(evidence, "25.75") || strings.Contains(evidence, "Savings") {
				t.Errorf("the evidence %q holds a value", evidence)
			}
		})
	}
	t.Logf("effect contracts against the write faults (%d silent wrong effects):\n%s", silent, strings.Join(table, "\n"))
}

// screenOnlyTransfer is the reference transfer without its effect
// contract (sealed again): the tests of the faults themselves read the
// screen the transfer leaves, which a post-read would navigate away from.
func screenOnlyTransfer(t *testing.T) *capability.Loaded {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(capDir, "memberdesk.transfer_funds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start, stop := strings.Index(text, "    effects:\n"), strings.Index(text, "          others: 0\n")
	if start < 0 || stop < start {
		t.Fatal("the reference transfer has no effects block")
	}
	l := loadCap(t, "memberdesk.transfer_funds", text[start:stop+len("          others: 0\n")], "")
	if len(l.Capability.Contracts()) != 0 {
		t.Fatal("the screen-only transfer still declares a contract")
	}
	return l
}

// confirmVerdict returns the confirm step's verdict and evidence.
func confirmVerdict(rec *domain.RunRecord) (domain.Effect, string) {
	if rec.Effects == nil {
		return "", ""
	}
	for _, se := range rec.Effects.Steps {
		if se.Step == "confirm" {
			return se.Verdict, se.Evidence
		}
	}
	return "", ""
}

// TestEffectPreReadFailsBeforeAnyWrite: the pre-read of a restricted
// member's history meets "Restricted Record", not the read-back's
// checkpoint, so the transfer ends before its first step: no submit
// reaches MemberDesk, the ledger stays empty, and the message says nothing
// was sent.
func TestEffectPreReadFailsBeforeAnyWrite(t *testing.T) {
	f := setupFaultRun(t)
	in := map[string]string{"member_id": "45678", "from_account": "Savings", "to_account": "Checking", "amount": "25.75"}
	rec := f.run(t, loadCap(t, "memberdesk.transfer_funds"), in, []string{"submit"})
	t.Logf("pre-read of a restricted member: %s %s: %s", rec.Status, rec.FailureCode, rec.Message)
	ledger, err := getLedger(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	st, err := getState(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status == domain.StatusSuccess || len(ledger) != 0 || st.Posts["/content/transfer/submit"] != 0 {
		t.Fatalf("%s with ledger %+v and posts %v; want a run that ends before any write", rec.Status, ledger, st.Posts)
	}
	if !strings.Contains(rec.Message, "pre-read of step confirm's effect contract") || !strings.Contains(rec.Message, "nothing was sent") {
		t.Errorf("message %q does not say the pre-read failed and nothing was sent", rec.Message)
	}
	if rec.Effects == nil || rec.Effects.Sent {
		t.Errorf("effects = %+v, want nothing sent", rec.Effects)
	}
}
