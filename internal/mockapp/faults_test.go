package mockapp

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func isBadGateway(r response) bool {
	return r.status == http.StatusBadGateway &&
		strings.Contains(r.body, "<title>502 Bad Gateway</title>") &&
		strings.Contains(r.body, "<h1>Bad Gateway</h1><p>The core system did not respond.</p>")
}

func TestTransientLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		count     int
		requests  int
		wantFired int
		wantLeft  int
	}{
		{name: "fires N times", count: 2, requests: 4, wantFired: 2, wantLeft: 0},
		{name: "forever", count: -1, requests: 4, wantFired: 4, wantLeft: -1},
		{name: "zero disarms", count: 0, requests: 2, wantFired: 0, wantLeft: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Options{})
			b.signOn(t)
			b.arm(t, FaultTransientLoad, tt.count)
			if got := b.state(t).Faults[FaultTransientLoad]; got != tt.count {
				t.Fatalf("armed count = %d, want %d", got, tt.count)
			}
			// Frame pages and the control API are never faulted.
			if r := b.get(t, "/"); r.status != http.StatusOK {
				t.Errorf("GET / under transient_load = %d", r.status)
			}
			if r := b.get(t, "/nav"); r.status != http.StatusOK {
				t.Errorf("GET /nav under transient_load = %d", r.status)
			}
			fired := 0
			for range tt.requests {
				r := b.get(t, searchPath)
				switch {
				case isBadGateway(r):
					fired++
				case r.status != http.StatusOK:
					t.Fatalf("unexpected %d: %q", r.status, r.body)
				}
			}
			if fired != tt.wantFired {
				t.Errorf("fired %d times, want %d", fired, tt.wantFired)
			}
			if got := b.state(t).Faults[FaultTransientLoad]; got != tt.wantLeft {
				t.Errorf("remaining = %d, want %d", got, tt.wantLeft)
			}
		})
	}
}

func TestArmZeroDisarmsAndResetClears(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.arm(t, FaultTransientLoad, -1)
	if r := b.get(t, homePath); !isBadGateway(r) {
		t.Fatalf("armed forever: %d", r.status)
	}
	b.arm(t, FaultTransientLoad, 0)
	if r := b.get(t, homePath); r.status != http.StatusOK {
		t.Fatalf("after arm 0: %d", r.status)
	}
	for _, f := range faultNames {
		b.arm(t, f, 3)
	}
	var st State
	if status := b.control(t, http.MethodPost, "/_control/reset", "", &st); status != http.StatusOK {
		t.Fatalf("reset = %d", status)
	}
	for _, f := range faultNames {
		if st.Faults[f] != 0 {
			t.Errorf("after reset %s = %d, want 0", f, st.Faults[f])
		}
	}
}

func TestSessionTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.arm(t, FaultSessionTimeout, 1)

	// A request without a session does not use the fault up.
	if r := b.get(t, signonPath); r.status != http.StatusOK {
		t.Fatalf("signon = %d", r.status)
	}
	if got := b.state(t).Faults[FaultSessionTimeout]; got != 1 {
		t.Fatalf("fault used by an unsessioned request: remaining %d", got)
	}

	b.signOn(t)
	r := b.get(t, searchPath)
	if r.status != http.StatusSeeOther || r.location() != signonPath {
		t.Fatalf("timed-out request = %d → %q, want 303 → signon", r.status, r.location())
	}
	if sc := r.header.Get("Set-Cookie"); !strings.Contains(sc, sessionCookie+"=;") || !strings.Contains(sc, "Max-Age=0") {
		t.Errorf("Set-Cookie = %q, want the session cookie expired", sc)
	}
	st := b.state(t)
	if st.Sessions != 0 || st.Faults[FaultSessionTimeout] != 0 {
		t.Errorf("state = %+v, want no session and the fault used up", st)
	}
	if r := b.get(t, searchPath); r.status != http.StatusSeeOther {
		t.Errorf("after timeout = %d, want 303 to sign on", r.status)
	}
	b.signOn(t)
	if r := b.get(t, searchPath); r.status != http.StatusOK {
		t.Errorf("after signing on again = %d, want 200", r.status)
	}
}

func hasNotice(body string) bool {
	return strings.Contains(body, `<div role="dialog" aria-modal="true" aria-label="Notice"`) &&
		strings.Contains(body, "Please review the updated terms of service.") &&
		hasButton(body, "Continue")
}

func TestUndeclaredDialog(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.arm(t, FaultUndeclaredDialog, 1)

	page := b.get(t, searchPath)
	if page.status != http.StatusOK || !hasNotice(page.body) || !hasHeading(page.body, "Member Search") {
		t.Fatalf("search with the notice: %d %q", page.status, page.body)
	}
	st := b.state(t)
	if !st.NoticePending || st.Faults[FaultUndeclaredDialog] != 0 {
		t.Fatalf("state = %+v, want a pending notice and the fault used", st)
	}
	if !hasNotice(b.get(t, transferPath).body) {
		t.Error("a pending notice must stay on every content page")
	}

	// Every form POST is swallowed: the form page again, nothing done.
	swallowed := []struct {
		path    string
		form    url.Values
		heading string
	}{
		{searchPath, url.Values{"member": {"12345"}}, "Member Search"},
		{subaccountPath, url.Values{"member": {"12345"}, "account_type": {"Savings"}, "deposit": {"1"}}, "Open Sub-Account"},
		{reviewPath, url.Values{"member": {"12345"}, "from": {"Savings"}, "to": {"Checking"}, "amount": {"1"}}, "Transfer Funds"},
		{submitPath, url.Values{"token": {"tok-1-0001"}}, "Transfer Funds"},
		{signonPath, url.Values{"operator": {"OP1001"}, "password": {"teller-pass-1"}}, "Sign On"},
	}
	for _, sw := range swallowed {
		r := b.post(t, sw.path, sw.form)
		if r.status != http.StatusOK || !hasNotice(r.body) || !hasHeading(r.body, sw.heading) {
			t.Errorf("POST %s with a pending notice = %d, want 200 %q with the notice: %q", sw.path, r.status, sw.heading, r.body)
		}
		if strings.Contains(r.header.Get("Set-Cookie"), sessionCookie) {
			t.Errorf("POST %s with a pending notice set a cookie", sw.path)
		}
	}
	if n := len(b.ledger(t)); n != 0 {
		t.Errorf("swallowed POSTs posted %d ledger entries", n)
	}
	if st := b.state(t); st.NoticeAcknowledged != 0 || st.Sessions != 1 {
		t.Errorf("state = %+v, want nothing acknowledged and one session", st)
	}

	ack := b.post(t, noticeAckPath, url.Values{"next": {searchPath}})
	if ack.status != http.StatusSeeOther || ack.location() != searchPath {
		t.Fatalf("ack = %d → %q", ack.status, ack.location())
	}
	if st := b.state(t); st.NoticeAcknowledged != 1 || st.NoticePending {
		t.Errorf("state after ack = %+v", st)
	}
	if hasNotice(b.get(t, searchPath).body) {
		t.Error("the notice came back after it was acknowledged")
	}
	if r := b.post(t, searchPath, url.Values{"member": {"12345"}}); r.status != http.StatusSeeOther {
		t.Errorf("search after ack = %d, want 303", r.status)
	}
	b.post(t, noticeAckPath, url.Values{})
	if st := b.state(t); st.NoticeAcknowledged != 1 {
		t.Errorf("an ack with nothing pending counted: %d", st.NoticeAcknowledged)
	}
}

func TestUndeclaredDialogOnRedirectTarget(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.arm(t, FaultUndeclaredDialog, 1)
	// The POST that redirects does not fire it; the GET it leads to does.
	r := b.post(t, searchPath, url.Values{"member": {"12345"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("search = %d", r.status)
	}
	member := b.get(t, r.location())
	if !hasNotice(member.body) || !hasHeading(member.body, "Member Details") {
		t.Errorf("member page lacks the notice: %q", member.body)
	}
	if !strings.Contains(member.body, `name="next" value="/content/member/12345"`) {
		t.Error("the notice does not return to the page it covers")
	}
}

func TestUndeclaredDialogForeverAndSignOn(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.arm(t, FaultUndeclaredDialog, -1)
	c := b.newClient(t)
	for i := range 2 {
		page := b.do(t, c, http.MethodGet, signonPath, nil)
		if !hasNotice(page.body) {
			t.Fatalf("round %d: signon lacks the notice", i)
		}
		if r := b.do(t, c, http.MethodPost, noticeAckPath, url.Values{"next": {"https://evil.example/"}}); r.location() != homePath {
			t.Errorf("ack with an off-site next → %q, want %s", r.location(), homePath)
		}
	}
	if st := b.state(t); st.NoticeAcknowledged != 2 || st.Faults[FaultUndeclaredDialog] != -1 {
		t.Errorf("state = %+v, want two acks and the fault still armed", st)
	}
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"/content/search":          "/content/search",
		"/content/member/12345":    "/content/member/12345",
		"":                         homePath,
		"/":                        homePath,
		"//evil.example/content/x": homePath,
		"https://evil.example/":    homePath,
		"/content/../_control/x":   homePath,
		"/content/search?x=1":      homePath,
		"javascript:alert(1)":      homePath,
	}
	for in, want := range tests {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidationError(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.arm(t, FaultValidationError, 1)
	// GETs do not use it up.
	if r := b.get(t, searchPath); r.status != http.StatusOK {
		t.Fatalf("GET = %d", r.status)
	}
	r := b.post(t, searchPath, url.Values{"member": {"12345"}})
	if r.status != http.StatusUnprocessableEntity || !hasRole(r.body, "alert", "The core system rejected the request: validation error") || !hasHeading(r.body, "Member Search") {
		t.Fatalf("POST under validation_error = %d: %q", r.status, r.body)
	}
	if !strings.Contains(r.body, `value="12345"`) {
		t.Error("the rejected form should keep the entered value")
	}
	if r := b.post(t, searchPath, url.Values{"member": {"12345"}}); r.status != http.StatusSeeOther {
		t.Errorf("second POST = %d, want 303", r.status)
	}

	// On submit it keeps the token: the retry posts exactly once.
	token := b.review(t, b.client, "12345", "Savings", "Checking", "10")
	b.arm(t, FaultValidationError, 1)
	r = b.post(t, submitPath, url.Values{"token": {token}})
	if r.status != http.StatusUnprocessableEntity || !hasHeading(r.body, "Review Transfer") || !strings.Contains(r.body, token) {
		t.Fatalf("submit under validation_error = %d: %q", r.status, r.body)
	}
	if n := len(b.ledger(t)); n != 0 {
		t.Fatalf("rejected submit posted %d entries", n)
	}
	if r := b.post(t, submitPath, url.Values{"token": {token}}); !strings.Contains(r.body, "Confirmation TRF-0001") {
		t.Errorf("retry: %q", r.body)
	}
}

func TestSlow(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.arm(t, FaultSlow, 1)
	start := time.Now()
	if r := b.get(t, signonPath); r.status != http.StatusOK {
		t.Fatalf("slow signon = %d", r.status)
	}
	if d := time.Since(start); d < 3*time.Second {
		t.Errorf("slow response took %v, want at least 3s", d)
	}
	start = time.Now()
	b.get(t, signonPath)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("unfaulted response took %v", d)
	}
}

func TestSlowRespectsCancellation(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.arm(t, FaultSlow, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+signonPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := b.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	// Cancel once the handler holds the request (it takes the fault before
	// it sleeps), not after a fixed time: on a loaded machine the request
	// may not have reached the app yet, and the fault would stay armed.
	for deadline := time.Now().Add(60 * time.Second); b.state(t).Faults[FaultSlow] != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow request never reached the app")
		}
	}
	start := time.Now()
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("want the cancelled request to fail")
	}
	// A handler that ignored the cancel would hold the response for
	// slowDelay (3 s).
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	// Close must not wait for a slow handler either.
	b.arm(t, FaultSlow, -1)
	go func() {
		if resp, err := http.Get(b.base + signonPath); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	if err := b.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close with a slow request in flight took %v", d)
	}
}

func TestFaultOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.arm(t, FaultTransientLoad, 1)
	b.arm(t, FaultSessionTimeout, 1)
	if r := b.get(t, homePath); !isBadGateway(r) {
		t.Fatalf("first = %d, want 502 (transient_load before session_timeout)", r.status)
	}
	if r := b.get(t, homePath); r.status != http.StatusSeeOther {
		t.Fatalf("second = %d, want the session timeout", r.status)
	}
	st := b.state(t)
	if st.Requests["GET /content/home"] != 2 {
		t.Errorf("requests = %v", st.Requests)
	}
}

func TestArmAfterLetsRequestsThrough(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	if code := b.control(t, http.MethodPost, "/_control/arm", `{"fault":"transient_load","count":1,"after":2}`, nil); code != http.StatusOK {
		t.Fatalf("arm with after = %d", code)
	}
	var got []bool
	for range 4 {
		got = append(got, isBadGateway(b.get(t, searchPath)))
	}
	if want := []bool{false, false, true, false}; !slices.Equal(got, want) {
		t.Errorf("fired pattern %v, want %v", got, want)
	}
	if code := b.control(t, http.MethodPost, "/_control/arm", `{"fault":"transient_load","count":1,"after":-1}`, nil); code != http.StatusBadRequest {
		t.Errorf("negative after = %d, want 400", code)
	}
}
