package mockapp

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

var tokenField = regexp.MustCompile(`<input type="hidden" name="token" value="([^"]+)">`)

// review posts the transfer form and returns the one-time token.
func (b *testBundle) review(tb testing.TB, c *http.Client, member, from, to, amount string) string {
	tb.Helper()
	resp := b.do(tb, c, http.MethodPost, reviewPath, url.Values{"member": {member}, "from": {from}, "to": {to}, "amount": {amount}})
	if resp.status != http.StatusOK || !hasHeading(resp.body, "Review Transfer") {
		tb.Fatalf("review = %d: %q", resp.status, resp.body)
	}
	m := tokenField.FindStringSubmatch(resp.body)
	if m == nil {
		tb.Fatalf("review page has no token: %q", resp.body)
	}
	return m[1]
}

func TestSubaccount(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)

	form := b.get(t, subaccountPath)
	if !hasHeading(form.body, "Open Sub-Account") || !hasButton(form.body, "Open account") {
		t.Fatalf("sub-account form: %q", form.body)
	}
	for _, label := range []string{"Member number", "Account type", "Initial deposit"} {
		if !regexp.MustCompile(`<tr><td[^>]*>` + label + `</td><td><(input|select)\b`).MatchString(form.body) {
			t.Errorf("no table row %q labelling a control", label)
		}
	}
	for _, forbidden := range []string{"<label", "title=", "placeholder", "aria-"} {
		if strings.Contains(form.body[strings.Index(form.body, "<form"):], forbidden) {
			t.Errorf("sub-account form has %q: its controls must be unnamed", forbidden)
		}
	}
	if !strings.Contains(form.body, "<option selected>Savings</option><option>Checking</option><option>Certificate</option>") {
		t.Error("account type options are not Savings, Checking, Certificate")
	}

	tests := []struct {
		name      string
		member    string
		typ       string
		deposit   string
		wantAlert string
	}{
		{name: "bad member", member: "12a45", typ: "Savings", deposit: "10.00", wantAlert: "Member number must be 5 digits"},
		{name: "unknown member", member: "99999", typ: "Savings", deposit: "10.00", wantAlert: "Member number not found"},
		{name: "restricted member", member: "45678", typ: "Savings", deposit: "10.00", wantAlert: "Member number is a restricted record"},
		{name: "closed member", member: "23456", typ: "Savings", deposit: "10.00", wantAlert: "Member number is a closed account"},
		{name: "bad type", member: "12345", typ: "Brokerage", deposit: "10.00", wantAlert: "Account type must be Savings, Checking or Certificate"},
		{name: "bad deposit", member: "12345", typ: "Checking", deposit: "ten", wantAlert: "Initial deposit must be a money amount such as 100.00"},
		{name: "negative deposit", member: "12345", typ: "Checking", deposit: "-5", wantAlert: "Initial deposit must be a money amount such as 100.00"},
		{name: "injected deposit", member: "12345", typ: "Checking", deposit: `<script>x</script>`, wantAlert: "Initial deposit must be a money amount such as 100.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := b.post(t, subaccountPath, url.Values{"member": {tt.member}, "account_type": {tt.typ}, "deposit": {tt.deposit}})
			if resp.status != http.StatusBadRequest || !hasRole(resp.body, "alert", tt.wantAlert) {
				t.Errorf("= %d, want 400 with alert %q: %q", resp.status, tt.wantAlert, resp.body)
			}
			if !hasHeading(resp.body, "Open Sub-Account") || strings.Contains(resp.body, "<script>") {
				t.Error("want the form re-rendered with the input escaped")
			}
		})
	}
}

func TestSubaccountOpens(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	for i, deposit := range []string{"$1,000.00", "25"} {
		resp := b.post(t, subaccountPath, url.Values{"member": {"12345"}, "account_type": {"Certificate"}, "deposit": {deposit}})
		want := fmt.Sprintf("Confirmation SUB-%04d", i+1)
		if resp.status != http.StatusOK || !hasHeading(resp.body, "Sub-account opened") || !strings.Contains(resp.body, want) {
			t.Fatalf("open #%d = %d: %q", i+1, resp.status, resp.body)
		}
	}
	got := b.ledger(t)
	want := []LedgerEntry{
		{Seq: 1, Kind: "subaccount_opened", Date: asOf, Confirmation: "SUB-0001", Member: "12345", Operator: "OP1001", AccountType: "Certificate", InitialDeposit: "1000.00"},
		{Seq: 2, Kind: "subaccount_opened", Date: asOf, Confirmation: "SUB-0002", Member: "12345", Operator: "OP1001", AccountType: "Certificate", InitialDeposit: "25.00"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ledger = %+v, want %+v", got, want)
	}
}

func TestTransferFlow(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)

	form := b.get(t, transferPath)
	if !hasHeading(form.body, "Transfer Funds") || !hasButton(form.body, "Review transfer") {
		t.Fatalf("transfer form: %q", form.body)
	}
	for label, control := range map[string]string{
		"Member number": `<input type="text" name="member"`,
		"From account":  `<select name="from"`,
		"To account":    `<select name="to"`,
		"Amount":        `<input type="text" name="amount"`,
	} {
		m := regexp.MustCompile(`<label for="([^"]+)">` + label + `</label>`).FindStringSubmatch(form.body)
		if m == nil {
			t.Errorf("no label %q", label)
			continue
		}
		if !regexp.MustCompile(regexp.QuoteMeta(control) + `[^>]*\bid="` + m[1] + `"`).MatchString(form.body) {
			t.Errorf("label %q (for=%s) does not label %s", label, m[1], control)
		}
	}
	if !strings.Contains(form.body, "<option selected>Savings</option><option>Checking</option></select>") ||
		!strings.Contains(form.body, "<option selected>Checking</option><option>Savings</option></select>") {
		t.Error("From/To options are not Savings, Checking / Checking, Savings")
	}

	review := b.post(t, reviewPath, url.Values{"member": {"12345"}, "from": {"Savings"}, "to": {"Checking"}, "amount": {"1,500.5"}})
	if review.status != http.StatusOK || !hasHeading(review.body, "Review Transfer") {
		t.Fatalf("review = %d: %q", review.status, review.body)
	}
	if want := `onsubmit="return confirm('Submit transfer of $1,500.50 from Savings to Checking? This cannot be undone.')"`; !strings.Contains(review.body, want) {
		t.Errorf("review lacks %s", want)
	}
	if !hasButton(review.body, "Submit transfer") || !regexp.MustCompile(`<a href="/content/transfer"[^>]*>Cancel</a>`).MatchString(review.body) {
		t.Error("review lacks Submit transfer or the Cancel link")
	}
	if v, _ := rowValue(tableRows(review.body), "Amount"); v != "$1,500.50" {
		t.Errorf("review amount = %q", v)
	}
	token := tokenField.FindStringSubmatch(review.body)[1]
	if len(b.ledger(t)) != 0 {
		t.Fatal("review must not post anything")
	}

	done := b.post(t, submitPath, url.Values{"token": {token}})
	if done.status != http.StatusOK || !hasHeading(done.body, "Transfer Complete") || !strings.Contains(done.body, "Confirmation TRF-0001") {
		t.Fatalf("submit = %d: %q", done.status, done.body)
	}
	want := []LedgerEntry{{Seq: 1, Kind: "transfer", Date: asOf, Confirmation: "TRF-0001", Member: "12345", Operator: "OP1001", From: "Savings", To: "Checking", Amount: "1500.50"}}
	if got := b.ledger(t); !slices.Equal(got, want) {
		t.Errorf("ledger = %+v, want %+v", got, want)
	}

	for _, tok := range []string{token, "tok-1-9999", ""} {
		again := b.post(t, submitPath, url.Values{"token": {tok}})
		if again.status != http.StatusConflict || !hasRole(again.body, "alert", "This transfer was already submitted") {
			t.Errorf("submit token %q again = %d: %q", tok, again.status, again.body)
		}
	}
	if n := len(b.ledger(t)); n != 1 {
		t.Errorf("ledger has %d entries after replays, want 1", n)
	}

	second := b.review(t, b.client, "56789", "Checking", "Savings", "$2.00")
	if resp := b.post(t, submitPath, url.Values{"token": {second}}); !strings.Contains(resp.body, "Confirmation TRF-0002") {
		t.Errorf("second transfer: %q", resp.body)
	}
}

func TestTransferValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	tests := []struct {
		name      string
		member    string
		from, to  string
		amount    string
		wantAlert string
	}{
		{name: "bad member", member: "1", from: "Savings", to: "Checking", amount: "1", wantAlert: "Member number must be 5 digits"},
		{name: "unknown member", member: "99999", from: "Savings", to: "Checking", amount: "1", wantAlert: "Member number not found"},
		{name: "restricted", member: "45678", from: "Savings", to: "Checking", amount: "1", wantAlert: "Member number is a restricted record"},
		{name: "closed", member: "23456", from: "Savings", to: "Checking", amount: "1", wantAlert: "Member number is a closed account"},
		{name: "bad from", member: "12345", from: "Brokerage", to: "Checking", amount: "1", wantAlert: "From account must be Savings or Checking"},
		{name: "bad to", member: "12345", from: "Savings", to: "Loan", amount: "1", wantAlert: "To account must be Checking or Savings"},
		{name: "same account", member: "12345", from: "Checking", to: "Checking", amount: "1", wantAlert: "To account must differ from From account"},
		{name: "no savings from", member: "34567", from: "Savings", to: "Checking", amount: "1", wantAlert: "From account Savings is not on file for this member"},
		{name: "no savings to", member: "34567", from: "Checking", to: "Savings", amount: "1", wantAlert: "To account Savings is not on file for this member"},
		{name: "zero", member: "12345", from: "Savings", to: "Checking", amount: "0.00", wantAlert: "Amount must be a money amount greater than zero"},
		{name: "words", member: "12345", from: "Savings", to: "Checking", amount: "lots", wantAlert: "Amount must be a money amount greater than zero"},
		{name: "injection", member: "12345", from: "Savings", to: "Checking", amount: `1');alert('x`, wantAlert: "Amount must be a money amount greater than zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := b.post(t, reviewPath, url.Values{"member": {tt.member}, "from": {tt.from}, "to": {tt.to}, "amount": {tt.amount}})
			if resp.status != http.StatusBadRequest || !hasRole(resp.body, "alert", tt.wantAlert) {
				t.Errorf("= %d, want 400 with alert %q: %q", resp.status, tt.wantAlert, resp.body)
			}
			if !hasHeading(resp.body, "Transfer Funds") || strings.Contains(resp.body, "onsubmit") {
				t.Error("want the transfer form again, without a review")
			}
			if strings.Contains(resp.body, `1');alert('x`) {
				t.Error("amount echoed unescaped")
			}
		})
	}
	if n := len(b.ledger(t)); n != 0 {
		t.Errorf("invalid transfers posted %d ledger entries", n)
	}
}

func TestConcurrentTellers(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	const tellers = 16
	var wg sync.WaitGroup
	confirmations := make(chan string, tellers)
	for range tellers {
		wg.Go(func() {
			c := b.newClient(t)
			b.signOnWith(t, c)
			token := b.review(t, c, "12345", "Savings", "Checking", "1.00")
			resp := b.do(t, c, http.MethodPost, submitPath, url.Values{"token": {token}})
			m := regexp.MustCompile(`Confirmation (TRF-\d{4})`).FindStringSubmatch(resp.body)
			if m == nil {
				t.Errorf("no confirmation: %q", resp.body)
				return
			}
			confirmations <- m[1]
		})
	}
	wg.Wait()
	close(confirmations)
	var got []string
	for c := range confirmations {
		got = append(got, c)
	}
	slices.Sort(got)
	for i, c := range got {
		if want := fmt.Sprintf("TRF-%04d", i+1); c != want {
			t.Errorf("confirmations %v are not TRF-0001..TRF-%04d", got, tellers)
			break
		}
	}
	if st := b.state(t); st.Sessions != tellers {
		t.Errorf("sessions = %d, want %d", st.Sessions, tellers)
	}
}

func TestRacingSubmitsPostOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	token := b.review(t, b.client, "12345", "Savings", "Checking", "5")
	var wg sync.WaitGroup
	statuses := make(chan int, 10)
	for range 10 {
		wg.Go(func() {
			statuses <- b.post(t, submitPath, url.Values{"token": {token}}).status
		})
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusOK] != 1 || counts[http.StatusConflict] != 9 {
		t.Errorf("statuses = %v, want one 200 and nine 409", counts)
	}
	if n := len(b.ledger(t)); n != 1 {
		t.Errorf("ledger entries = %d, want 1", n)
	}
}
