package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNotLoopback refuses an address that is not on loopback.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckLoopback accepts a listen address whose host is localhost or a
// loopback IP ("127.0.0.1:8813", "[::1]:0", "localhost:8813").
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: want HOST:PORT on loopback: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("address %q: %w (use 127.0.0.1, ::1 or localhost)", addr, ErrNotLoopback)
}

// Listen listens on addr, which must be on loopback.
func Listen(addr string) (net.Listener, error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

// Gate serves h only to requests addressed to the loopback listener at
// addr: the Host header must be 127.0.0.1, [::1] or localhost with addr's
// port, and an Origin header, when sent, must be http:// one of those. A
// page on another site (DNS rebinding, a cross-site fetch) gets 403.
func Gate(addr net.Addr, h http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(addr.String())
	hosts := map[string]bool{}
	for _, host := range []string{"127.0.0.1", "[::1]", "localhost"} {
		hosts[host+":"+port] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts[strings.ToLower(r.Host)] {
			http.Error(w, "forbidden host", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Scheme != "http" || !hosts[strings.ToLower(u.Host)] || u.Path != "" {
				http.Error(w, "forbidden origin", http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Handler is the streamable HTTP handler for clients of the listener at
// addr, behind [Gate].
func (s *Server) Handler(addr net.Addr) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout: 30 * time.Minute, MaxRequestBodyBytes: 1 << 20})
	return Gate(addr, h)
}

// Serve serves streamable HTTP on ln (from [Listen]) until ctx ends, then
// shuts down, waiting up to five seconds for calls in flight before closing
// every connection left.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := CheckLoopback(ln.Addr().String()); err != nil {
		return err
	}
	if err := s.Sync(ctx); err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler(ln.Addr()), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// A connection still open after the grace period carries no call
		// worth waiting for (ctx ended every call's context): a client's
		// spare connection that never sent a request counts as active for
		// its first five seconds. Close the rest.
		return srv.Close()
	}
	return nil
}
