package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuahq/cua/internal/toolspec"
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

// Authenticator tells who holds a bearer token: the principal directory
// (principal.Directory, as `cua mcp` adapts it), naming the principal as
// it is recorded. Any error (an unknown, wrong, locked or disabled token)
// refuses the request with the same 401, which never says whether a name
// exists.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (who string, err error)
}

// RequireToken serves h only to requests with "Authorization: Bearer
// TOKEN" for a token a names; any other gets 401 with WWW-Authenticate.
// The principal travels with the request as the SDK's token info (its
// UserID): a session belongs to the principal that opened it (the SDK
// refuses it to another), and [Principal] reads it in a call.
func RequireToken(a Authenticator, h http.Handler) http.Handler {
	verified := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		who, _ := ctx.Value(principalKey{}).(string)
		if who == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: who}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		who := ""
		if ok && tok != "" {
			if p, err := a.Authenticate(r.Context(), tok); err == nil {
				who = p
			}
		}
		if who == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cua mcp"`)
			http.Error(w, "a valid bearer token (a principal's, from cua users add) is required", http.StatusUnauthorized)
			return
		}
		verified.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, who)))
	})
}

type principalKey struct{}

// Principal is who made req: the principal whose bearer token carried it
// over HTTP, "" over stdio (where the parent process is the caller).
func Principal(req mcp.Request) string {
	if req == nil || req.GetExtra() == nil || req.GetExtra().TokenInfo == nil {
		return ""
	}
	return req.GetExtra().TokenInfo.UserID
}

// Handler is the streamable HTTP handler for clients of the listener at
// addr, behind [Gate] and then [RequireToken] with a.
func (s *Server) Handler(addr net.Addr, a Authenticator) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout: 30 * time.Minute, MaxRequestBodyBytes: 1 << 20})
	return Gate(addr, RequireToken(a, h))
}

// audit logs every tool call with the principal that made it, the run and
// its status.
func audit(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "tools/call" {
				return res, err
			}
			attrs := []any{slog.String("principal", Principal(req))}
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				attrs = append(attrs, slog.String("tool", p.Name))
			}
			if r, ok := res.(*mcp.CallToolResult); ok {
				if tr, ok := r.StructuredContent.(toolspec.Result); ok {
					attrs = append(attrs, slog.String("run_id", tr.RunID), slog.String("status", string(tr.Status)))
				}
			}
			if err != nil {
				attrs = append(attrs, slog.Bool("error", true))
			}
			log.InfoContext(ctx, "tool call", attrs...)
			return res, err
		}
	}
}

// Serve serves streamable HTTP on ln (from [Listen]) until ctx ends, then
// shuts down, waiting up to five seconds for calls in flight before closing
// every connection left. Every request needs a bearer token a names
// (required); each tool call is logged to Config.Log with its principal.
// Call it once per Server.
func (s *Server) Serve(ctx context.Context, ln net.Listener, a Authenticator) error {
	if a == nil {
		return errors.New("mcpserver: serving HTTP needs an authenticator")
	}
	if err := CheckLoopback(ln.Addr().String()); err != nil {
		return err
	}
	if err := s.Sync(ctx); err != nil {
		return err
	}
	s.mcp.AddReceivingMiddleware(audit(slog.New(slog.NewTextHandler(s.cfg.Log, nil))))
	srv := &http.Server{Handler: s.Handler(ln.Addr(), a), ReadHeaderTimeout: 10 * time.Second,
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
