package mockapp

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestBadGatewayAfterPost(t *testing.T) {
	t.Parallel()
	t.Run("sign-on lands, then 502", func(t *testing.T) {
		t.Parallel()
		b := setup(t, Options{})
		b.arm(t, FaultBadGatewayAfterPost, 1)
		r := b.post(t, signonPath, url.Values{"operator": {b.srv.opts.Operator}, "password": {b.srv.opts.Password}})
		if !isBadGateway(r) || r.location() != "" {
			t.Fatalf("sign-on under bad_gateway_after_post = %d → %q: %q", r.status, r.location(), r.body)
		}
		if !strings.Contains(r.header.Get("Set-Cookie"), sessionCookie+"=md-") {
			t.Errorf("Set-Cookie = %q, want the new session's cookie", r.header.Get("Set-Cookie"))
		}
		st := b.state(t)
		if st.Sessions != 1 || st.Faults[FaultBadGatewayAfterPost] != 0 || st.Posts[signonPath] != 1 {
			t.Fatalf("state = %+v, want one session, the fault used and one sign-on POST", st)
		}
		// The session is live: the next page is signed on.
		if r := b.get(t, homePath); r.status != http.StatusOK || !strings.Contains(r.body, "Signed on as OP1001") {
			t.Errorf("home after the 502 = %d %q", r.status, r.body)
		}
	})
	t.Run("transfer posts, then 502", func(t *testing.T) {
		t.Parallel()
		b := setup(t, Options{})
		b.signOn(t)
		token := b.reviewToken(t)
		b.arm(t, FaultBadGatewayAfterPost, 1)
		if r := b.post(t, submitPath, url.Values{"token": {token}}); !isBadGateway(r) {
			t.Fatalf("submit under bad_gateway_after_post = %d %q", r.status, r.body)
		}
		if l := b.ledger(t); len(l) != 1 || l[0].Kind != "transfer" {
			t.Fatalf("ledger = %+v, want the transfer posted once", l)
		}
		// A browser reload re-sends the POST: the app counts it and refuses
		// the used token.
		if r := b.post(t, submitPath, url.Values{"token": {token}}); r.status != http.StatusConflict {
			t.Errorf("re-sent submit = %d, want 409", r.status)
		}
		if st := b.state(t); st.Posts[submitPath] != 2 || st.Posts[reviewPath] != 1 {
			t.Errorf("posts = %v, want submit 2, review 1", st.Posts)
		}
		if n := len(b.ledger(t)); n != 1 {
			t.Errorf("ledger holds %d entries after a re-sent submit, want 1", n)
		}
	})
	t.Run("GETs do not use it up; after counts POSTs", func(t *testing.T) {
		t.Parallel()
		b := setup(t, Options{})
		b.signOn(t)
		if code := b.control(t, http.MethodPost, "/_control/arm", `{"fault":"bad_gateway_after_post","count":1,"after":1}`, nil); code != http.StatusOK {
			t.Fatalf("arm = %d", code)
		}
		if r := b.get(t, searchPath); r.status != http.StatusOK {
			t.Fatalf("GET search = %d", r.status)
		}
		if r := b.post(t, searchPath, url.Values{"member": {"12345"}}); r.status != http.StatusSeeOther {
			t.Fatalf("first POST (let through) = %d, want 303", r.status)
		}
		if r := b.post(t, searchPath, url.Values{"member": {"12345"}}); !isBadGateway(r) {
			t.Fatalf("second POST = %d, want 502", r.status)
		}
		if r := b.post(t, searchPath, url.Values{"member": {"12345"}}); r.status != http.StatusSeeOther {
			t.Errorf("third POST = %d, want 303 (fault used up)", r.status)
		}
		if st := b.state(t); st.Posts[searchPath] != 3 {
			t.Errorf("posts = %v, want search 3", st.Posts)
		}
	})
}

// reviewToken reviews a 1.00 Savings→Checking transfer for 12345 and
// returns its token.
func (b *testBundle) reviewToken(tb testing.TB) string {
	tb.Helper()
	r := b.post(tb, reviewPath, url.Values{"member": {"12345"}, "from": {"Savings"}, "to": {"Checking"}, "amount": {"1.00"}})
	m := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(r.body)
	if r.status != http.StatusOK || m == nil {
		tb.Fatalf("review = %d, no token: %q", r.status, r.body)
	}
	return m[1]
}

func TestSessionDropAfterSignon(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.arm(t, FaultSessionDropAfterSignon, 1)
	// A refused sign-on does not use it up.
	if r := b.post(t, signonPath, url.Values{"operator": {"OP1001"}, "password": {"wrong"}}); r.status != http.StatusOK {
		t.Fatalf("bad sign-on = %d", r.status)
	}
	if got := b.state(t).Faults[FaultSessionDropAfterSignon]; got != 1 {
		t.Fatalf("remaining after a refused sign-on = %d, want 1", got)
	}
	b.signOn(t) // 303 to home: the sign-on itself succeeds
	r := b.get(t, homePath)
	if r.status != http.StatusSeeOther || r.location() != signonPath {
		t.Fatalf("first request after sign-on = %d → %q, want 303 → %s", r.status, r.location(), signonPath)
	}
	if sc := r.header.Get("Set-Cookie"); !strings.Contains(sc, "Max-Age=0") {
		t.Errorf("Set-Cookie = %q, want the cookie expired", sc)
	}
	if st := b.state(t); st.Sessions != 0 || st.Faults[FaultSessionDropAfterSignon] != 0 {
		t.Errorf("state = %+v, want the session dropped and the fault used", st)
	}
	b.signOn(t)
	if r := b.get(t, homePath); r.status != http.StatusOK {
		t.Errorf("after signing on again = %d, want 200", r.status)
	}
}

func hasSurvey(body string) bool {
	return strings.Contains(body, `<div role="dialog" aria-modal="true" aria-label="`+surveyName+`"`) &&
		strings.Contains(body, surveyText) && hasButton(body, "No thanks")
}

func TestDialogAfterSubmit(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.arm(t, FaultDialogAfterSubmit, 1)
	// Review is not a submit: the fault waits.
	token := b.reviewToken(t)
	if got := b.state(t).Faults[FaultDialogAfterSubmit]; got != 1 {
		t.Fatalf("remaining after review = %d", got)
	}
	r := b.post(t, submitPath, url.Values{"token": {token}})
	if r.status != http.StatusOK || !hasHeading(r.body, "Transfer Complete") || !strings.Contains(r.body, "Confirmation TRF-0001") || !hasSurvey(r.body) {
		t.Fatalf("submit = %d, want Transfer Complete under a Survey dialog: %q", r.status, r.body)
	}
	if l := b.ledger(t); len(l) != 1 {
		t.Fatalf("ledger = %+v, want one entry", l)
	}
	r = b.post(t, submitPath, url.Values{"token": {b.reviewToken(t)}})
	if r.status != http.StatusOK || hasSurvey(r.body) {
		t.Errorf("second submit = %d, survey %v; want no survey", r.status, hasSurvey(r.body))
	}
}

func TestFocusSteal(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.arm(t, FaultFocusSteal, 1)
	r := b.get(t, searchPath)
	for _, want := range []string{`"aria-label", "` + chatName + `"`, `"aria-modal", "true"`, chatText, `"Close"`, `d.focus()`, `input[name="member"]`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("search page under focus_steal lacks %q", want)
		}
	}
	if st := b.state(t); st.Faults[FaultFocusSteal] != 0 {
		t.Errorf("remaining = %d, want 0", st.Faults[FaultFocusSteal])
	}
	if r := b.get(t, searchPath); strings.Contains(r.body, chatName) {
		t.Error("the popup came back after the fault was used")
	}
}

func TestStaleResult(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	if r := b.get(t, memberPrefix+"34567"); !strings.Contains(r.body, ">Member 34567</h2>") || strings.Contains(r.body, "md-fresh") {
		t.Fatalf("no identity heading without stale_result: %q", r.body)
	}
	b.control(t, http.MethodPost, "/_control/reset", "{}", nil)
	b.signOn(t)
	b.arm(t, FaultStaleResult, 2)
	// No member viewed yet: another fixture member stands in.
	r := b.get(t, memberPrefix+"12345")
	first, fresh, ok := strings.Cut(r.body, `<template id="md-fresh">`)
	if r.status != http.StatusOK || !ok {
		t.Fatalf("member under stale_result = %d, no fresh record: %q", r.status, r.body)
	}
	if !strings.Contains(first, "<h2") || !strings.Contains(first, ">Member 56789</h2>") || !strings.Contains(first, "Carl Large") {
		t.Errorf("stale part does not show member 56789: %q", first)
	}
	if !strings.Contains(fresh, ">Member 12345</h2>") || !strings.Contains(fresh, "Jane Doe") || !strings.Contains(fresh, "$1,234.56") {
		t.Errorf("fresh part does not show member 12345: %q", fresh)
	}
	if !strings.Contains(fresh, "setTimeout(") || !strings.Contains(fresh, "1500") {
		t.Errorf("no in-place replacement after 1500 ms: %q", fresh)
	}
	// Now the previous member is 12345: 23456 first shows 12345.
	r = b.get(t, memberPrefix+"23456")
	first, fresh, _ = strings.Cut(r.body, `<template id="md-fresh">`)
	if !strings.Contains(first, ">Member 12345</h2>") || !strings.Contains(first, "Jane Doe") || !strings.Contains(fresh, "Robert Roe") {
		t.Errorf("second stale page: want 12345 then 23456: %q", r.body)
	}
	// Used up: the record alone, with its identity heading.
	r = b.get(t, memberPrefix+"34567")
	if strings.Contains(r.body, "md-fresh") || !strings.Contains(r.body, ">Member 34567</h2>") {
		t.Errorf("after the fault: %q", r.body)
	}
	b.control(t, http.MethodPost, "/_control/reset", "{}", nil)
	b.signOn(t)
	if r := b.get(t, memberPrefix+"34567"); !strings.Contains(r.body, ">Member 34567</h2>") {
		t.Errorf("no identity heading after a reset: %q", r.body)
	}
}

func TestPostCounter(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	b.post(t, searchPath, url.Values{"member": {"12345"}})
	b.post(t, searchPath, url.Values{"member": {"99999"}})
	b.get(t, searchPath)
	token := b.reviewToken(t)
	b.post(t, submitPath, url.Values{"token": {token}})
	want := map[string]int{signonPath: 1, searchPath: 2, reviewPath: 1, submitPath: 1}
	st := b.state(t)
	if len(st.Posts) != len(want) {
		t.Errorf("posts = %v, want %v", st.Posts, want)
	}
	for p, n := range want {
		if st.Posts[p] != n {
			t.Errorf("posts[%s] = %d, want %d", p, st.Posts[p], n)
		}
	}
	b.control(t, http.MethodPost, "/_control/reset", "{}", nil)
	if st := b.state(t); len(st.Posts) != 0 {
		t.Errorf("posts after reset = %v", st.Posts)
	}
}
