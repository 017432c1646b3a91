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
)

// faultNames lists every fault, sorted.
var faultNames = []string{
	FaultSessionTimeout,
	FaultSlow,
	FaultTransientLoad,
	FaultUndeclaredDialog,
	FaultValidationError,
}

// slowDelay is how long FaultSlow holds a content response.
const slowDelay = 3 * time.Second

// Texts the faults render; tests and capabilities match them.
const (
	noticeText          = "Please review the updated terms of service."
	validationErrorText = "The core system rejected the request: validation error"
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
// a fixed order: slow, transient_load, session_timeout. It reports whether
// the request should go on to its handler.
func (s *Server) contentFaults(w http.ResponseWriter, r *http.Request) bool {
	if s.fire(FaultSlow) && !sleepContext(r.Context(), slowDelay) {
		return false // the client went away; nobody reads an answer
	}
	if s.fire(FaultTransientLoad) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(badGatewayPage))
		return false
	}
	if sess, ok := s.requestSession(r); ok && s.fire(FaultSessionTimeout) {
		s.dropSession(sess.ID)
		expireSessionCookie(w)
		http.Redirect(w, r, signonPath, http.StatusSeeOther)
		return false
	}
	return true
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
