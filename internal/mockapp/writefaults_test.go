package mockapp

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

var confirmationText = regexp.MustCompile(`Confirmation (TRF-\d{4})`)

// submitPage posts the submit form of token the way the review page does
// and returns the answer and the confirmation it shows ("" for none).
func (b *testBundle) submitPage(tb testing.TB, token string) (response, string) {
	tb.Helper()
	r := b.post(tb, submitPath, url.Values{"token": {token}})
	m := confirmationText.FindStringSubmatch(r.body)
	if m == nil {
		return r, ""
	}
	return r, m[1]
}

// ledgerLine is the part of an entry a write fault decides.
func ledgerLine(e LedgerEntry) string {
	return e.Confirmation + " " + e.Member + " " + e.Operator + " " + e.From + ">" + e.To + " " + e.Amount
}

func ledgerLines(l []LedgerEntry) []string {
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = ledgerLine(e)
	}
	return out
}

// TestWriteFaultsAnswerPagesTheLedgerContradicts: for each write fault
// that answers a page, arm it once, post a transfer of 25.75 as the review
// page does, and compare what the page says with what /_control/ledger
// holds; the fault is used up and the next transfer posts normally.
func TestWriteFaultsAnswerPagesTheLedgerContradicts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault         string
		shown         string   // confirmation on the page
		ledger        []string // the truth
		rejectedLater bool
	}{
		{"", "TRF-0001", []string{"TRF-0001 12345 OP1001 Savings>Checking 25.75"}, false},
		{FaultPartialSave, "TRF-0001", []string{"TRF-0001 12345 OP1001 Savings>Checking 25.00"}, false},
		{FaultDuplicateSubmit, "TRF-0001", []string{"TRF-0001 12345 OP1001 Savings>Checking 25.75", "TRF-0002 12345 OP1001 Savings>Checking 25.75"}, false},
		{FaultOptimisticThenReject, "TRF-0001", nil, true},
		{FaultStaleOverwrite, "TRF-0002", []string{"TRF-0001 12345 OP2002 Savings>Checking 250.00", "TRF-0002 12345 OP1001 Savings>Checking 25.75"}, false},
		{FaultLostWrite, "TRF-0001", nil, false},
	}
	for _, tc := range cases {
		name := tc.fault
		if name == "" {
			name = "no fault"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Options{})
			b.signOn(t)
			token := b.review(t, b.client, "12345", "Savings", "Checking", "25.75")
			if tc.fault != "" {
				b.arm(t, tc.fault, 1)
			}
			r, shown := b.submitPage(t, token)
			if r.status != http.StatusOK || !hasHeading(r.body, "Transfer Complete") || !strings.Contains(r.body, "$25.75") || shown != tc.shown {
				t.Fatalf("page = %d, confirmation %q: %q; want Transfer Complete for $25.75 with %s", r.status, shown, r.body, tc.shown)
			}
			if got := strings.Contains(r.body, rejectText); got != tc.rejectedLater {
				t.Errorf("page carries the later rejection %v, want %v", got, tc.rejectedLater)
			}
			got := ledgerLines(b.ledger(t))
			if strings.Join(got, "|") != strings.Join(tc.ledger, "|") {
				t.Fatalf("ledger = %q, want %q", got, tc.ledger)
			}
			st := b.state(t)
			if tc.fault != "" && st.Faults[tc.fault] != 0 {
				t.Errorf("faults = %v, want %s used up", st.Faults, tc.fault)
			}
			// The token is used whatever the page said: a resubmit posts nothing.
			if r, _ := b.submitPage(t, token); r.status != http.StatusConflict {
				t.Errorf("resubmit = %d, want 409", r.status)
			}
			// The next transfer is untouched.
			next := b.review(t, b.client, "12345", "Savings", "Checking", "1.00")
			if r, shown := b.submitPage(t, next); r.status != http.StatusOK || shown == "" || shown == tc.shown {
				t.Fatalf("next transfer = %d %q", r.status, shown)
			}
			if l := b.ledger(t); len(l) != len(tc.ledger)+1 || l[len(l)-1].Amount != "1.00" {
				t.Errorf("ledger after the next transfer = %q", ledgerLines(l))
			}
		})
	}
}

// TestWriteFaultsFireOnPostingSubmitsOnly: a refused token does not use a
// write fault up, and "after" counts posting submits.
func TestWriteFaultsFireOnPostingSubmitsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.control(t, http.MethodPost, "/_control/arm", `{"fault":"lost_write","count":1,"after":1}`, nil)
	if r, _ := b.submitPage(t, "tok-1-9999"); r.status != http.StatusConflict {
		t.Fatalf("unknown token = %d, want 409", r.status)
	}
	first := b.review(t, b.client, "12345", "Savings", "Checking", "5.00")
	if r, shown := b.submitPage(t, first); r.status != http.StatusOK || shown != "TRF-0001" {
		t.Fatalf("first submit = %d %q", r.status, shown)
	}
	second := b.review(t, b.client, "12345", "Checking", "Savings", "6.00")
	if r, shown := b.submitPage(t, second); r.status != http.StatusOK || shown != "TRF-0002" {
		t.Fatalf("second submit = %d %q", r.status, shown)
	}
	if got := ledgerLines(b.ledger(t)); len(got) != 1 || got[0] != "TRF-0001 12345 OP1001 Savings>Checking 5.00" {
		t.Fatalf("ledger = %q, want only the first transfer (the second was lost)", got)
	}
	if st := b.state(t); st.Faults[FaultLostWrite] != 0 {
		t.Errorf("faults = %v, want lost_write used", st.Faults)
	}
}

// TestResetAfterWrite: the entry lands and the connection is reset with no
// response; the token stays good for one more POST, so a client that
// re-sends it (as Chromium does) posts a second entry and gets the only
// confirmation page.
func TestResetAfterWrite(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	token := b.review(t, b.client, "12345", "Savings", "Checking", "40.00")
	b.arm(t, FaultResetAfterWrite, 1)
	req, err := http.NewRequest(http.MethodPost, b.base+submitPath, strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("submit under reset_after_write answered %d, want the connection reset", resp.StatusCode)
	}
	t.Logf("submit under reset_after_write: %v", err)
	if got := ledgerLines(b.ledger(t)); len(got) != 1 {
		t.Fatalf("ledger after the reset = %q, want the entry written", got)
	}
	r, shown := b.submitPage(t, token)
	if r.status != http.StatusOK || shown != "TRF-0002" {
		t.Fatalf("re-sent submit = %d %q: %q", r.status, shown, r.body)
	}
	want := []string{"TRF-0001 12345 OP1001 Savings>Checking 40.00", "TRF-0002 12345 OP1001 Savings>Checking 40.00"}
	if got := ledgerLines(b.ledger(t)); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("ledger = %q, want %q", got, want)
	}
	if r, _ := b.submitPage(t, token); r.status != http.StatusConflict {
		t.Errorf("third submit = %d, want 409", r.status)
	}
}

// setupHold is setup with timeout_after_write's hold set to d.
func setupHold(tb testing.TB, d time.Duration) *testBundle {
	tb.Helper()
	logs := &syncBuffer{}
	srv, err := New(Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	srv.hold = d
	if err := srv.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	b := &testBundle{srv: srv, base: srv.URL(), logs: logs, secrets: []string{srv.opts.Password}}
	b.client = b.newClient(tb)
	return b
}

// TestTimeoutAfterWrite: the entry lands and no answer comes; a client
// that gives up first gets nothing, and one that outwaits the hold gets
// 504 Gateway Timeout.
func TestTimeoutAfterWrite(t *testing.T) {
	t.Parallel()
	b := setupHold(t, 3*time.Second)
	b.signOn(t)
	token := b.review(t, b.client, "12345", "Savings", "Checking", "12.34")
	b.arm(t, FaultTimeoutAfterWrite, 1)
	impatient := *b.client
	impatient.Timeout = 500 * time.Millisecond
	req, err := http.NewRequest(http.MethodPost, b.base+submitPath, strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	start := time.Now()
	resp, err := impatient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("submit under timeout_after_write answered %d within %s", resp.StatusCode, time.Since(start))
	}
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Fatalf("submit under timeout_after_write: %v, want the client's timeout", err)
	}
	if got := ledgerLines(b.ledger(t)); len(got) != 1 || got[0] != "TRF-0001 12345 OP1001 Savings>Checking 12.34" {
		t.Fatalf("ledger = %q, want the entry written", got)
	}
	// A patient client: the hold ends in 504, and the entry is there once.
	b.arm(t, FaultTimeoutAfterWrite, 1)
	next := b.review(t, b.client, "12345", "Checking", "Savings", "1.00")
	start = time.Now()
	r := b.post(t, submitPath, url.Values{"token": {next}})
	if r.status != http.StatusGatewayTimeout || !hasHeading(r.body, "Gateway Timeout") || time.Since(start) < 3*time.Second {
		t.Fatalf("patient submit = %d after %s: %q; want 504 after the 3 s hold", r.status, time.Since(start), r.body)
	}
	if n := len(b.ledger(t)); n != 2 {
		t.Errorf("ledger holds %d entries, want 2", n)
	}
}
