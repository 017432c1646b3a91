package mockapp

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options configures a Server. Zero values select the defaults.
type Options struct {
	Addr     string       // listen address; default "127.0.0.1:0"
	Variant  string       // "a" (default), "b" or "c"; see VariantA
	Operator string       // the valid operator id; default "OP1001"
	Password string       // the valid password; default "teller-pass-1"
	Logger   *slog.Logger // nil discards
}

// Defaults applied by New.
const (
	DefaultAddr     = "127.0.0.1:0"
	DefaultOperator = "OP1001"
	DefaultPassword = "teller-pass-1"
)

// Server is the MemberDesk app. Create it with New, then either Open it
// (a real listener) or mount Handler (httptest).
type Server struct {
	opts   Options
	logger *slog.Logger
	mux    *http.ServeMux

	mu sync.Mutex
	st state // guarded by mu

	// hold overrides timeoutHold (tests set it before Open).
	hold time.Duration

	life sync.Mutex // guards the fields below
	ln   net.Listener
	srv  *http.Server
	done chan struct{} // closed when Serve returns
}

// New validates opts, applies defaults and returns an unopened Server. It
// returns an error naming the field when opts.Variant is not "a", "b" or "c".
func New(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.Variant == "" {
		opts.Variant = VariantA
	}
	if !validVariant(opts.Variant) {
		return nil, fmt.Errorf("mockapp: Options.Variant %q: want %q, %q or %q", opts.Variant, VariantA, VariantB, VariantC)
	}
	if opts.Operator == "" {
		opts.Operator = DefaultOperator
	}
	if opts.Password == "" {
		opts.Password = DefaultPassword
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, logger: logger}
	s.st.reset(opts.Variant)
	s.mux = s.routes()
	return s, nil
}

// Open binds Options.Addr and serves on it in a goroutine. Because it binds
// before returning, URL is valid as soon as Open returns, even for port 0.
// It returns an error if the address cannot be bound or Open was already
// called; a closed Server cannot be reopened.
func (s *Server) Open() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.ln != nil {
		return errors.New("mockapp: open: server was already opened")
	}
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("mockapp: listen on %s: %w", s.opts.Addr, err)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	s.done = make(chan struct{})
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("mockapp serve", "err", err)
		}
	}(s.srv, s.done)
	s.logger.Info("mockapp open", "url", s.urlLocked(), "variant", s.opts.Variant)
	return nil
}

// URL returns the base URL, "http://127.0.0.1:PORT", or "" before Open.
// A wildcard listen address is reported as 127.0.0.1.
func (s *Server) URL() string {
	s.life.Lock()
	defer s.life.Unlock()
	return s.urlLocked()
}

func (s *Server) urlLocked() string {
	if s.ln == nil {
		return ""
	}
	addr, ok := s.ln.Addr().(*net.TCPAddr)
	if !ok {
		return "http://" + s.ln.Addr().String()
	}
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
}

// Close stops the listener and every open connection (in-flight slow
// requests are cancelled) and waits for the serve goroutine. Closing an
// unopened or closed Server is a no-op.
func (s *Server) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	<-s.done
	s.srv, s.done = nil, nil
	if err != nil {
		return fmt.Errorf("mockapp: close: %w", err)
	}
	return nil
}

var _ http.Handler = (*Server)(nil)

// Handler returns the app's handler, for use with httptest.
func (s *Server) Handler() http.Handler { return s }

// ServeHTTP is the app's single gate: common headers, the Host and Origin
// guard (guard.go), request counting,
// then content faults and the session check for /content/*, then routing.
// Control routes skip everything but the headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if s.guard(w, r) {
		return
	}
	path := r.URL.Path
	if strings.HasPrefix(path, controlPrefix) {
		s.mux.ServeHTTP(w, r)
		return
	}
	s.countRequest(r.Method, path)
	s.logger.Debug("request", "method", r.Method, "path", path)
	if strings.HasPrefix(path, contentPrefix) {
		if !s.contentFaults(w, r) {
			return
		}
		sess, ok := s.requestSession(r)
		if !ok && !publicContent(path) {
			http.Redirect(w, r, signonPath, http.StatusSeeOther)
			return
		}
		if ok {
			r = r.WithContext(withSession(r.Context(), sess))
		}
		if r.Method == http.MethodPost && s.fire(FaultBadGatewayAfterPost) {
			s.badGatewayAfterPost(w, r)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// publicContent reports whether a content path is served without a session.
// The notice acknowledgement is public so a notice on the sign-on page can
// be dismissed.
func publicContent(path string) bool {
	return path == signonPath || path == noticeAckPath
}
