package mockapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

// The write faults whose point is what a real browser does with a
// connection that never answers, replayed in real Chromium with the
// reference transfer.

var transferInputs = map[string]string{"member_id": "12345", "from_account": "Savings", "to_account": "Checking", "amount": "25.00"}

func getLedger(ctx context.Context, base string) ([]mockapp.LedgerEntry, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_control/ledger", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Entries []mockapp.LedgerEntry `json:"entries"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("decode ledger: %w", err)
	}
	return body.Entries, nil
}

var onScreenConfirmation = regexp.MustCompile(`^Confirmation (TRF-\d{4})$`)

// confirmationOnScreen returns the confirmation numbers the content frame
// shows now.
func (f *faultRun) confirmationOnScreen(t *testing.T) []string {
	t.Helper()
	snap, err := f.sess.Observe(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range snap.Nodes {
		for _, s := range []string{n.Name, n.Value} {
			if m := onScreenConfirmation.FindStringSubmatch(s); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// TestResetAfterWriteInChromium: armed once, the submit's entry lands and
// its connection is reset; Chromium re-sends the POST on its own, the
// re-sent submit posts a second entry, and the transfer's replay sees one
// confirmation. Two entries, one confirmation: only reading the ledger
// back tells.
func TestResetAfterWriteInChromium(t *testing.T) {
	f := setupFaultRun(t)
	f.arm(t, mockapp.FaultResetAfterWrite)
	rec := f.run(t, screenOnlyTransfer(t), transferInputs, []string{"submit"})
	t.Logf("transfer under reset_after_write: %s %s: %s %v", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	st, err := getState(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := getLedger(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	if st.Posts["/content/transfer/submit"] != 2 || st.Faults[mockapp.FaultResetAfterWrite] != 0 {
		t.Fatalf("posts %v, faults %v; want Chromium to re-send the submit once and the fault used", st.Posts, st.Faults)
	}
	if len(ledger) != 2 || ledger[0].Amount != "25.00" || ledger[1].Amount != "25.00" {
		t.Fatalf("ledger = %+v, want two entries of 25.00", ledger)
	}
	shown := f.confirmationOnScreen(t)
	if len(shown) != 1 || shown[0] != ledger[1].Confirmation {
		t.Errorf("confirmations on screen = %q, want only the re-sent submit's %s", shown, ledger[1].Confirmation)
	}
	if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["confirmation"]) != ledger[1].Confirmation {
		t.Errorf("replay: %s %v; want SUCCESS confirming %s (the screen's only confirmation)", rec.Status, rec.Outputs, ledger[1].Confirmation)
	}
}

// TestTimeoutAfterWriteInChromium: the submit's entry lands and no answer
// comes; the replay does not see a confirmation (it halts when its step
// wait runs out), and the ledger holds the entry once.
func TestTimeoutAfterWriteInChromium(t *testing.T) {
	f := setupFaultRun(t)
	f.arm(t, mockapp.FaultTimeoutAfterWrite)
	start := time.Now()
	rec := f.run(t, screenOnlyTransfer(t), transferInputs, []string{"submit"})
	t.Logf("transfer under timeout_after_write: %s %s: %s after %s", rec.Status, rec.FailureCode, rec.Message, time.Since(start).Round(time.Millisecond))
	if rec.Status == domain.StatusSuccess {
		t.Fatalf("the replay succeeded with %v while no answer came", rec.Outputs)
	}
	ledger, err := getLedger(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	st, err := getState(f.ctx, f.app.URL())
	if err != nil {
		t.Fatal(err)
	}
	if len(ledger) != 1 || ledger[0].Amount != "25.00" || st.Posts["/content/transfer/submit"] != 1 {
		t.Fatalf("ledger = %+v, posts %v; want the one entry of the one submit", ledger, st.Posts)
	}
	if shown := f.confirmationOnScreen(t); len(shown) != 0 {
		t.Errorf("confirmations on screen = %q, want none", shown)
	}
}
