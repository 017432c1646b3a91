package console

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
)

// Relay headers: a front console calling a worker's session relay sends
// its service principal's token as a bearer token and names the
// signed-in operator it acts for.
const (
	OperatorHeader = "X-Cua-Operator"
	// relayPaths are what a relay serves: the live endpoints of the
	// sessions parked in its process, nothing else (no page, no sign-in).
)

// RelayAuth checks a front console calling a session relay: token must be
// the relay credential (a service principal's token the worker accepts)
// and operator a principal allowed to act; it returns the operator's
// identity. Any error refuses the call with 401 and says nothing more.
type RelayAuth interface {
	AuthenticateRelay(ctx context.Context, token, operator string) (Identity, error)
}

// RelayAuthFunc adapts a function to a RelayAuth.
type RelayAuthFunc func(ctx context.Context, token, operator string) (Identity, error)

// AuthenticateRelay calls f.
func (f RelayAuthFunc) AuthenticateRelay(ctx context.Context, token, operator string) (Identity, error) {
	return f(ctx, token, operator)
}

type relayKey struct{}

// relayPath reports whether a relay serves path.
func relayPath(path string) bool {
	switch path {
	case "/api/sessions", "/api/view", "/api/plan", "/api/claim", "/api/renew", "/api/release", "/api/resume", "/api/input", "/ws":
		return true
	}
	return false
}

// serveRelay is the gate of a relay (Config.Relay set): every request
// carries the relay credential as a bearer token and the operator it acts
// for; a missing or wrong one is 401. The console's handlers then run as
// that operator: the lease (holder human:<operator>, its epoch), the
// HUMAN policy, hit-testing and dispatch are this process's, exactly as
// for a browser signed in here.
func (s *Server) serveRelay(w http.ResponseWriter, r *http.Request) {
	if !relayPath(r.URL.Path) {
		http.NotFound(w, r)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	op := r.Header.Get(OperatorHeader)
	if !ok || strings.TrimSpace(tok) == "" || !validName(op) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cua relay"`)
		http.Error(w, "relay: a bearer token and an operator are required", http.StatusUnauthorized)
		return
	}
	who, err := s.cfg.Relay.AuthenticateRelay(r.Context(), strings.TrimSpace(tok), op)
	if err == nil && who.Name != op {
		err = errors.New("relay: the authenticator named another operator")
	}
	if err != nil {
		s.cfg.Logger.WarnContext(r.Context(), "relay call refused", slog.String("remote", r.RemoteAddr), slog.String("operator", op))
		w.Header().Set("WWW-Authenticate", `Bearer realm="cua relay"`)
		http.Error(w, "relay: refused", http.StatusUnauthorized)
		return
	}
	s.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), relayKey{}, &signin{who: who})))
}

// relayCaller is the operator a relay request acts for (set by
// serveRelay).
func relayCaller(r *http.Request) (*signin, bool) {
	si, ok := r.Context().Value(relayKey{}).(*signin)
	return si, ok && si != nil
}

// relayURL is the address a parked session's queue row names for the
// relay serving it: Config.Advertise, else the listener's URL.
func (s *Server) relayURL() string {
	if s.cfg.Relay == nil {
		return ""
	}
	if s.cfg.Advertise != "" {
		return s.cfg.Advertise
	}
	return s.URL()
}
