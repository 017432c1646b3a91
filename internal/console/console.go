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
// run's evidence with actor human (DESIGN invariant 4). It never sends an
// unmasked frame, never serves a foreign Origin, a request without its CSRF
// token or an unsigned-in browser, and listens on loopback unless told
// otherwise.
package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
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
	// address needs AllowRemote.
	Addr        string
	AllowRemote bool
	// Token is the sign-in token operators type; required, 16 characters
	// or more.
	Token  string
	Broker *hitl.Broker
	Logger *slog.Logger
	// SweepEvery is how often abandoned holds are expired; 1s when 0.
	SweepEvery time.Duration
}

// Server is the console. Open binds it, Close stops it; it is safe for
// concurrent use.
type Server struct {
	cfg  Config
	ln   net.Listener
	srv  *http.Server
	mux  *http.ServeMux
	stop context.CancelFunc
	done chan struct{}

	mu       sync.Mutex
	live     map[string]*live
	sessions map[string]*signin // cookie value → signed-in operator
}

// signin is one signed-in browser.
type signin struct {
	operator string
	csrf     string
}

// New checks cfg and returns an unopened server.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Broker == nil {
		return nil, errors.New("console: a broker is required")
	}
	if len(cfg.Token) < 16 {
		return nil, errors.New("console: the sign-in token must be 16 characters or more")
	}
	if err := CheckAddr(cfg.Addr, cfg.AllowRemote); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = time.Second
	}
	s := &Server{cfg: cfg, live: map[string]*live{}, sessions: map[string]*signin{}}
	s.routes()
	return s, nil
}

// CheckAddr refuses an address that is not host:port, and a non-loopback
// one unless allowRemote.
func CheckAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("console: addr %q: %w", addr, err)
	}
	if !allowRemote && !isLoopback(host) {
		return fmt.Errorf("console: addr %q is not a loopback address (--allow-remote to serve it)", addr)
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

// NewToken returns a random sign-in token.
func NewToken() string { return randHex(24) }

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
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
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
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

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
	id := p.Waiting.SessionID
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
