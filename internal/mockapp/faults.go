package mockapp

import (
	"context"
	"net/http"
	"time"
)

// Fault names accepted by POST /_control/arm. Faults only ever touch
// /content/* requests.
const (
	// FaultTransientLoad answers the content request 502 Bad Gateway.
	FaultTransientLoad = "transient_load"
	// FaultSessionTimeout drops the request's session and redirects to sign-on.
	// It fires only on requests that carry a valid session.
	FaultSessionTimeout = "session_timeout"
	// FaultUndeclaredDialog shows a modal "Notice" on the next content GET
	// page; until it is acknowledged every content form POST is swallowed.
	FaultUndeclaredDialog = "undeclared_dialog"
	// FaultValidationError answers the next content form POST 422 with its
	// form and a rejection alert; nothing is committed.
	FaultValidationError = "validation_error"
	// FaultSlow delays the content response by slowDelay.
	FaultSlow = "slow"
	// FaultBadGatewayAfterPost processes a content form POST in full (its
	// effect happens: a sign-on creates the session and sets its cookie, a
	// transfer posts to the ledger) and then answers it with the 502 page
	// instead of its own response or redirect. Eligible: content POSTs.
	FaultBadGatewayAfterPost = "bad_gateway_after_post"
	// FaultSessionDropAfterSignon lets a sign-on succeed, then drops that
	// session on its first content request (303 to sign-on, cookie
	// expired). Eligible: successful sign-ons.
	FaultSessionDropAfterSignon = "session_drop_after_signon"
	// FaultDialogAfterSubmit posts a submitted transfer (the ledger entry is
	// written) and then shows an undeclared modal dialog named "Survey" over
	// the Transfer Complete page. Eligible: transfers that post.
	FaultDialogAfterSubmit = "dialog_after_submit"
	// FaultFocusSteal makes the Member Search page open a "Chat with us"
	// popup (role dialog, aria-modal, button "Close" removes it) on the
	// first input into the member number field; the popup takes focus, so
	// only the first typed character lands. Eligible: Member Search page
	// loads (GET).
	FaultFocusSteal = "focus_steal"
	// FaultStaleResult makes Member Details first show the previously viewed
	// member's record (same layout, heading "Member NNNNN", name and
	// balances; another fixture member when there is none), then replace it
	// in place with the requested record after staleDelay. Eligible: member
	// record pages. Every Member Details page, with or without the fault,
	// carries the identity heading "Member NNNNN" under "Member Details",
	// so a capability can check it; only a capability that does reads the
	// record asked for.
	FaultStaleResult = "stale_result"
)

// faultNames lists every fault, sorted.
var faultNames = []string{
	FaultBadGatewayAfterPost,
	FaultDialogAfterSubmit,
	FaultDuplicateSubmit,
	FaultFocusSteal,
	FaultLostWrite,
	FaultOptimisticThenReject,
	FaultPartialSave,
	FaultResetAfterWrite,
	FaultSessionDropAfterSignon,
	FaultSessionTimeout,
	FaultSlow,
	FaultStaleOverwrite,
	FaultStaleResult,
	FaultTimeoutAfterWrite,
	FaultTransientLoad,
	FaultUndeclaredDialog,
	FaultValidationError,
}

// slowDelay is how long FaultSlow holds a content response.
const slowDelay = 3 * time.Second

// staleDelay is how long FaultStaleResult shows the previous record.
const staleDelay = 1500 * time.Millisecond

// Texts the faults render; tests and capabilities match them.
const (
	noticeText          = "Please review the updated terms of service."
	validationErrorText = "The core system rejected the request: validation error"
	surveyName          = "Survey"
	surveyText          = "How was your experience today?"
	chatName            = "Chat with us"
	chatText            = "Need help? An agent is online."
)

// badGatewayPage is the body of a transient_load response.
const badGatewayPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>502 Bad Gateway</title></head>
<body><h1>Bad Gateway</h1><p>The core system did not respond.</p></body></html>
`

func knownFault(name string) bool {
	for _, f := range faultNames {
		if f == name {
			return true
		}
	}
	return false
}

// arm sets the remaining firings of fault: -1 forever, 0 disarmed; the
// first after eligible requests pass untouched.
func (s *Server) arm(fault string, count, after int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.st.skip, fault)
	if count == 0 {
		delete(s.st.faults, fault)
		return
	}
	s.st.faults[fault] = count
	if after > 0 {
		s.st.skip[fault] = after
	}
}

// fire reports whether fault is armed and, if so, uses up one firing.
func (s *Server) fire(fault string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fireLocked(fault)
}

func (s *Server) fireLocked(fault string) bool {
	n, ok := s.st.faults[fault]
	if !ok {
		return false
	}
	if k := s.st.skip[fault]; k > 0 {
		s.st.skip[fault] = k - 1
		return false
	}
	left := n // -1: armed forever
	switch {
	case n == 1:
		left = 0
		delete(s.st.faults, fault)
	case n > 1:
		left = n - 1
		s.st.faults[fault] = left
	}
	s.logger.Info("fault fired", "fault", fault, "remaining", left)
	return true
}

// contentFaults applies the request-level faults to a /content/* request in
// a fixed order: slow, transient_load, then a session drop (a mark left by
// session_drop_after_signon, else session_timeout). It reports whether
// the request should go on to its handler.
func (s *Server) contentFaults(w http.ResponseWriter, r *http.Request) bool {
	if s.fire(FaultSlow) && !sleepContext(r.Context(), slowDelay) {
		return false // the client went away; nobody reads an answer
	}
	if s.fire(FaultTransientLoad) {
		writeBadGateway(w)
		return false
	}
	if sess, ok := s.requestSession(r); ok && (s.takeDropMark(sess.ID) || s.fire(FaultSessionTimeout)) {
		s.dropSession(sess.ID)
		expireSessionCookie(w)
		http.Redirect(w, r, signonPath, http.StatusSeeOther)
		return false
	}
	return true
}

func writeBadGateway(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusBadGateway)
	_, _ = w.Write([]byte(badGatewayPage))
}

// swallowWriter takes a handler's whole response and keeps only its
// headers.
type swallowWriter struct{ h http.Header }

func (sw *swallowWriter) Header() http.Header         { return sw.h }
func (sw *swallowWriter) Write(p []byte) (int, error) { return len(p), nil }
func (sw *swallowWriter) WriteHeader(int)             {}

// badGatewayAfterPost runs a content POST's handler in full (its effect
// lands) and answers 502 instead; only the cookies the handler set go out,
// so a sign-on's session does reach the browser.
func (s *Server) badGatewayAfterPost(w http.ResponseWriter, r *http.Request) {
	sw := &swallowWriter{h: http.Header{}}
	s.mux.ServeHTTP(sw, r)
	for _, c := range sw.h.Values("Set-Cookie") {
		w.Header().Add("Set-Cookie", c)
	}
	writeBadGateway(w)
}

// markDropAfterSignon marks a fresh session to be dropped on its first
// content request when session_drop_after_signon fires.
func (s *Server) markDropAfterSignon(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fireLocked(FaultSessionDropAfterSignon) {
		s.st.dropMarks[id] = true
	}
}

// takeDropMark reports whether session id is marked to be dropped, and
// clears the mark.
func (s *Server) takeDropMark(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.st.dropMarks[id] {
		return false
	}
	delete(s.st.dropMarks, id)
	return true
}

// staleFor returns the member whose record a stale_result page shows first
// for number, and records number as the last member viewed.
func (s *Server) staleFor(number string) member {
	s.mu.Lock()
	prev := s.st.lastMember
	s.st.lastMember = number
	s.mu.Unlock()
	if m, ok := members[prev]; ok && prev != number && !m.Restricted {
		return m
	}
	for _, other := range []string{"12345", "56789"} {
		if other != number {
			return members[other]
		}
	}
	return members["12345"]
}

// setLastMember records the last member record viewed.
func (s *Server) setLastMember(number string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.lastMember = number
}

// sleepContext waits d or until ctx is done, reporting whether d elapsed.
func sleepContext(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// noticeOnGet reports whether a content GET page must carry the notice
// dialog; an armed undeclared_dialog fires here when no notice is pending.
func (s *Server) noticeOnGet() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.noticePending {
		return true
	}
	if s.fireLocked(FaultUndeclaredDialog) {
		s.st.noticePending = true
		return true
	}
	return false
}

func (s *Server) noticePending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.noticePending
}

// ackNotice clears a pending notice and counts the acknowledgement.
func (s *Server) ackNotice() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.noticePending {
		s.st.noticePending = false
		s.st.noticeAcks++
	}
}

// formPrelude runs before every content form POST is processed; form is
// the page that holds the form. A pending notice swallows the POST: the form
// page is answered again, with the dialog, and nothing happens. An armed
// validation_error answers the form page 422 with a rejection alert. It
// reports whether the handler should go on.
func (s *Server) formPrelude(w http.ResponseWriter, r *http.Request, form page) bool {
	if s.noticePending() {
		form.notice = true
		s.render(w, r, form)
		return false
	}
	if s.fire(FaultValidationError) {
		form.status = http.StatusUnprocessableEntity
		form.alert = validationErrorText
		s.render(w, r, form)
		return false
	}
	return true
}
