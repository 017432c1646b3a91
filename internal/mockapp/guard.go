package mockapp

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// The request gate against other sites (DNS rebinding, cross-site forms):
// a request whose Host is not this server's is answered 421 Misdirected
// Request, and a state-changing request (POST, PUT, PATCH, DELETE) whose
// Origin header is not this server's own origin is answered 403, on every
// route: the control API, the automation API and the app's own forms. A
// request without an Origin header (a non-browser client) passes; the
// app's own pages post with their own origin and pass.
//
// Accepted Host values, with the bound port only:
//   - the bound IP literal;
//   - bound on loopback: any loopback IP literal and "localhost";
//   - bound on a wildcard address: any IP literal and "localhost".
//
// A DNS name other than localhost is never accepted: that is what a
// rebinding page sends. Before Open (Handler under httptest) the port is
// unknown, and loopback IP literals and "localhost" pass on any port.

// guard answers a request that fails the Host or Origin check and reports
// whether it did.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) bool {
	if !s.hostAllowed(r.Host) {
		s.logger.Warn("request refused: host", "host", r.Host, "path", r.URL.Path)
		guardError(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("421 misdirected request: host %q is not this server", r.Host))
		return true
	}
	if !stateChanging(r.Method) {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "http://"+r.Host {
		return false
	}
	s.logger.Warn("request refused: origin", "origin", origin, "method", r.Method, "path", r.URL.Path)
	guardError(w, r, http.StatusForbidden, fmt.Sprintf("403 forbidden: origin %q may not %s %s", origin, r.Method, r.URL.Path))
	return true
}

func stateChanging(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func guardError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if strings.HasPrefix(r.URL.Path, controlPrefix) || strings.HasPrefix(r.URL.Path, "/_automation/") {
		writeJSON(w, status, controlError{Error: msg, Field: "header"})
		return
	}
	http.Error(w, msg, status)
}

// hostAllowed reports whether a request's Host names this server.
func (s *Server) hostAllowed(host string) bool {
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		return false // browsers always send the port of a non-default one
	}
	s.life.Lock()
	ln := s.ln
	s.life.Unlock()
	ip := net.ParseIP(name)
	if ln == nil {
		return name == "localhost" || (ip != nil && ip.IsLoopback())
	}
	bound, ok := ln.Addr().(*net.TCPAddr)
	if !ok || port != strconv.Itoa(bound.Port) {
		return false
	}
	switch {
	case bound.IP.IsUnspecified():
		return name == "localhost" || ip != nil
	case bound.IP.IsLoopback():
		return name == "localhost" || (ip != nil && ip.IsLoopback())
	default:
		return ip != nil && ip.Equal(bound.IP)
	}
}

// IsLoopbackAddr reports whether a listen address ("host:port") binds
// loopback only: a loopback IP literal or "localhost". An empty host (all
// interfaces) or any other name is not loopback.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
