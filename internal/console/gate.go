package console

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/cuahq/cua/internal/hitl"
)

const (
	sessionCookie = "cua_console"
	// preCookie carries the sign-in form's CSRF token (double submit).
	preCookie  = "cua_console_pre"
	csrfHeader = "X-CSRF-Token"
)

// ServeHTTP is the console's one gate (tailscale's localapi and safeweb
// manner): every response carries CSP, X-Frame-Options DENY and nosniff;
// a request for another Host is refused (DNS rebinding); every request
// that changes state, and the WebSocket, must come from the console's own
// Origin with the signed-in browser's CSRF token; everything but the
// sign-in page needs a signed-in browser.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make a form post's Origin "null"
	h.Set("Cache-Control", "no-store")
	if !s.hostAllowed(r.Host) {
		http.Error(w, "host not allowed", http.StatusForbidden)
		return
	}
	if s.cfg.Relay != nil {
		s.serveRelay(w, r)
		return
	}
	ws := r.URL.Path == "/ws"
	if r.Method != http.MethodGet && r.Method != http.MethodHead || ws {
		if !s.sameOrigin(r) {
			http.Error(w, "foreign or missing Origin", http.StatusForbidden)
			return
		}
	}
	if s.cfg.Fronts != nil && s.proxied(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) hostAllowed(host string) bool {
	if host == s.ln.Addr().String() {
		return true
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return false
	}
	_, own, _ := net.SplitHostPort(s.ln.Addr().String())
	if port != own {
		return false
	}
	return s.cfg.AllowRemote || isLoopback(h)
}

// sameOrigin reports whether the request's Origin is the console itself.
func (s *Server) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != s.scheme() {
		return false
	}
	return u.Host == r.Host
}

// signedIn returns the signed-in operator of r, checking its CSRF token
// (header, or the csrf query parameter of the WebSocket) when needCSRF.
func (s *Server) signedIn(r *http.Request, needCSRF bool) (*signin, bool) {
	if s.cfg.Relay != nil {
		return relayCaller(r)
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, false
	}
	s.mu.Lock()
	si, ok := s.sessions[c.Value]
	if ok && !s.cfg.Now().Before(si.expires) {
		delete(s.sessions, c.Value)
		ok = false
	}
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	if needCSRF {
		tok := r.Header.Get(csrfHeader)
		if tok == "" {
			tok = r.URL.Query().Get("csrf")
		}
		if tok == "" || !equal(tok, si.csrf) {
			return nil, false
		}
	}
	return si, true
}

// guarded wraps a state-changing API handler: signed in, CSRF checked; op
// is the signed-in principal's name.
func (s *Server) guarded(h func(w http.ResponseWriter, r *http.Request, op string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		si, ok := s.signedIn(r, true)
		if !ok {
			http.Error(w, "sign in, and send the CSRF token", http.StatusForbidden)
			return
		}
		h(w, r, si.who.Name)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// errStatus maps a broker or input error to an HTTP status.
func errStatus(err error) int {
	switch {
	case errors.Is(err, hitl.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, hitl.ErrUnknownSession):
		return http.StatusNotFound
	case errors.Is(err, errRefused):
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// validName reports whether an authenticated principal's name is one the
// console may hold a lease as and show (defence in depth: the directory
// already refuses any other): lower-case letters, digits, '.' and '-',
// starting with a letter, at most 40.
func validName(name string) bool {
	if name == "" || len(name) > 40 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	return strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.')
	}) < 0
}
