// Package console owns the operator console: a web page (HTTP and one
// WebSocket per watched session) that lists the sessions waiting for a
// person, shows the chosen one live (CDP screencast frames with sensitive
// and secret fields painted black in every frame), and lets a signed-in
// operator claim it, act on it, release it and resume the run. It is also
// the runtime.Parker a replay run parks in, so the parked run and the
// console share one process and one browser session.
//
// The console never injects input into a page itself: every click and key
// becomes a raw_input action hit-tested to the node under it (or the
// focused node), classified by that node's risk, authorized under the
// HUMAN profile (an irreversible control needs the operator's explicit
// confirmation in the page), dispatched by the runtime and recorded in the
// run's evidence with actor human and the principal's name (DESIGN
// invariant 4). It never sends an unmasked frame, never serves a foreign
// Origin, a request without its CSRF token or an unsigned-in browser, and
// listens on loopback unless told otherwise (and then only over TLS).
//
// People sign in with their own principal token (cua users add): the name
// the console shows, holds leases as and records is the principal's, never
// typed. Sign-in tries are limited per remote address, and the directory
// behind the [Authenticator] locks a principal after repeated wrong
// secrets.
package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/runtime"
)

// DefaultAddr is where the console listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8812"

// Config configures a Server.
type Config struct {
	// Addr is the listen address; DefaultAddr when empty. A non-loopback
	// address needs AllowRemote and TLS.
	Addr        string
	AllowRemote bool
	// TLS, when set, is the certificate the console serves HTTPS with.
	TLS *tls.Certificate
	// Auth checks the principal tokens people sign in with; required.
	Auth   Authenticator
	Broker *hitl.Broker
	Logger *slog.Logger
	// SweepEvery is how often abandoned holds are expired; 1s when 0.
	SweepEvery time.Duration
	// SignInLimit sign-in tries are answered per remote address in any
	// SignInWindow; more get 429 with Retry-After. 10 a minute when 0.
	SignInLimit  int
	SignInWindow time.Duration
	// SessionTTL is how long a signed-in browser stays signed in; 12 hours
	// when 0.
	SessionTTL time.Duration
	// Now is the clock of the sign-in limit and of sessions; time.Now when
	// nil.
	Now func() time.Time
	// Relay, when set, makes the server a worker's session relay (see
	// relay.go): no page and no sign-in, only the parked sessions' live
	// endpoints for a front console holding the relay credential.
	Relay RelayAuth
	// Advertise is the relay's base URL as queue rows name it; the
	// listener's URL when empty.
	Advertise string
	// Fronts, in a front console, reaches the sessions parked in other
	// processes through their relays (see proxy.go); nil: only this
	// process's.
	Fronts *RelayClient
	// OnGesture, when set, is told every gesture dispatched in a session
	// of this process (see record.go); it must not call back into the
	// console. Landing is where a sign-in lands; "/" when empty.
	OnGesture func(ctx context.Context, g Gesture)
	Landing   string
}

// Identity is a signed-in person as the console knows them: a verified
// principal's name and role.
type Identity struct {
	Name string
	Role string
}

// Authenticator checks a principal's sign-in token (interfaces are declared
// where consumed: the composition root adapts the principal directory). An
// error refuses the sign-in; a *LockedError says the principal is locked.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (Identity, error)
}

// AuthFunc adapts a function to an Authenticator.
type AuthFunc func(ctx context.Context, token string) (Identity, error)

// Authenticate calls f.
func (f AuthFunc) Authenticate(ctx context.Context, token string) (Identity, error) {
	return f(ctx, token)
}

// LockedError is an Authenticator's refusal of a principal locked after
// repeated wrong secrets: even its right token is refused until Until.
type LockedError struct {
	Until time.Time
	Err   error
}

func (e *LockedError) Error() string {
	return "locked until " + e.Until.UTC().Format(time.RFC3339)
}

// Unwrap returns the directory's own error.
func (e *LockedError) Unwrap() error { return e.Err }

// Server is the console. Open binds it, Close stops it; it is safe for
// concurrent use.
type Server struct {
	cfg  Config
	ln   net.Listener
	srv  *http.Server
	mux  *http.ServeMux
	stop context.CancelFunc
	done chan struct{}

	limit *limiter

	mu       sync.Mutex
	live     map[string]*live
	sessions map[string]*signin // cookie value → signed-in principal
}

// signin is one signed-in browser.
type signin struct {
	who     Identity
	csrf    string
	expires time.Time
}

// New checks cfg and returns an unopened server.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Broker == nil {
		return nil, errors.New("console: a broker is required")
	}
	if cfg.Auth == nil && cfg.Relay == nil {
		return nil, errors.New("console: an authenticator of principal tokens is required")
	}
	if err := CheckAddr(cfg.Addr, cfg.AllowRemote, cfg.TLS != nil); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = time.Second
	}
	if cfg.SignInLimit <= 0 {
		cfg.SignInLimit = 10
	}
	if cfg.SignInWindow <= 0 {
		cfg.SignInWindow = time.Minute
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, live: map[string]*live{}, sessions: map[string]*signin{},
		limit: newLimiter(cfg.SignInLimit, cfg.SignInWindow, cfg.Now)}
	s.routes()
	return s, nil
}

// CheckAddr refuses an address that is not host:port, and a non-loopback
// one unless allowRemote and served over TLS (withTLS).
func CheckAddr(addr string, allowRemote, withTLS bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("console: addr %q: %w", addr, err)
	}
	if isLoopback(host) {
		return nil
	}
	if !allowRemote {
		return fmt.Errorf("console: addr %q is not a loopback address (--allow-remote with --tls-cert and --tls-key to serve it)", addr)
	}
	if !withTLS {
		return fmt.Errorf("console: addr %q is not a loopback address: serving it needs TLS (--tls-cert and --tls-key), tokens and sessions must not cross the network in the clear", addr)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// Open binds the address and starts serving and sweeping expired holds.
func (s *Server) Open(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("console: listen: %w", err)
	}
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*s.cfg.TLS}, MinVersion: tls.VersionTLS12})
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelDebug)}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop, s.done = stop, make(chan struct{})
	go func() { _ = s.srv.Serve(ln) }()
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.cfg.SweepEvery)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
				s.cfg.Broker.Sweep(sctx)
			}
		}
	}()
	return nil
}

// URL returns the console's base URL, once open.
func (s *Server) URL() string { return s.scheme() + "://" + s.ln.Addr().String() }

func (s *Server) scheme() string {
	if s.cfg.TLS != nil {
		return "https"
	}
	return "http"
}

// Close stops serving; parked runs keep waiting for their timeout.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	s.stop()
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		// A spare connection that never sent a request counts as active
		// for its first five seconds: close what the grace period left.
		return s.srv.Close()
	}
	return nil
}

// Park implements runtime.Parker: it offers the session in this console
// and blocks until an operator resumes it or ctx ends.
func (s *Server) Park(ctx context.Context, p runtime.Parked) error {
	lv, err := newLive(p)
	if err != nil {
		return err
	}
	lv.onGesture = s.cfg.OnGesture
	id := p.Waiting.SessionID
	if p.Waiting.Relay == "" {
		p.Waiting.Relay = s.relayURL()
	}
	s.mu.Lock()
	s.live[id] = lv
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.live, id)
		s.mu.Unlock()
		lv.close()
	}()
	s.cfg.Logger.InfoContext(ctx, "run parked", slog.String("session", id), slog.String("step", p.Waiting.Step))
	return s.cfg.Broker.Hold(ctx, p.Run.Lease, p.Holder, p.Epoch, p.Waiting)
}

func (s *Server) session(id string) (*live, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lv, ok := s.live[id]
	return lv, ok
}

var _ runtime.Parker = (*Server)(nil)
