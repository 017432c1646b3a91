package observer

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed assets/*.html assets/style.css
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"pathEscape": url.PathEscape,
	"ms":         func(n int64) string { return (time.Duration(n) * time.Millisecond).String() },
	"drift":      func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"when":       when,
}).ParseFS(assets, "assets/*.html"))

var styleCSS = func() []byte {
	b, err := assets.ReadFile("assets/style.css")
	if err != nil {
		panic(err)
	}
	return b
}()

// HistorySchemaVersion is the version of history.json's shape.
const HistorySchemaVersion = 1

// Security headers every response carries, whatever its status. The
// policy allows no script at all, inline or not.
const (
	ContentSecurityPolicy = "default-src 'none'; img-src 'self'; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

// notFoundBody is the one 404 body: a missing run, a run not served, a
// screenshot not served and an unknown path all answer these bytes.
const notFoundBody = "404 not found\n"

// ServerOptions configures a Server.
type ServerOptions struct {
	Plan    Plan
	Library *Library
	// Logger receives one line per refused request; nil discards.
	Logger *slog.Logger
}

// Server is the observer's HTTP server: GET and HEAD only, one gate for
// Host and security headers, the routes of the run library. Create it with
// NewServer, then Open (binds first, so port 0 works), URL and Close.
type Server struct {
	plan Plan
	lib  *Library
	log  *slog.Logger

	mu    sync.Mutex
	ln    net.Listener
	srv   *http.Server
	done  chan struct{}
	hosts map[string]bool // Host header values answered
}

// NewServer returns an unopened Server. It returns an error naming the
// field when the plan or the library is missing.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Library == nil {
		return nil, errors.New("observer: ServerOptions.Library is nil")
	}
	if opts.Plan.Mode == "" || opts.Plan.Addr == "" {
		return nil, errors.New("observer: ServerOptions.Plan is empty: build it with ValidateExposure")
	}
	if opts.Plan.Mode == ModeShareSafeOpen && !opts.Plan.Safe {
		return nil, errors.New("observer: ServerOptions.Plan: share-safe-open without Safe")
	}
	if opts.Plan.Safe != opts.Library.opts.Safe {
		return nil, errors.New("observer: ServerOptions.Plan.Safe and the Library's Safe differ")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{plan: opts.Plan, lib: opts.Library, log: log}, nil
}

// Open binds the plan's address and serves in a goroutine. It returns an
// error when the address cannot be bound or Open was called before.
func (s *Server) Open() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return errors.New("observer: server already opened")
	}
	ln, err := net.Listen("tcp", s.plan.Addr)
	if err != nil {
		return fmt.Errorf("observer: bind %s: %w", s.plan.Addr, err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	host, _, _ := net.SplitHostPort(s.plan.Addr)
	s.hosts = map[string]bool{strings.ToLower(ln.Addr().String()): true, strings.ToLower(net.JoinHostPort(host, port)): true}
	for _, h := range s.plan.PublicHosts {
		s.hosts[h] = true
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("observer stopped", slog.String("error", err.Error()))
		}
	}()
	return nil
}

// URL is the bound origin, http://host:port, once Open returned.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Close stops serving, waiting up to five seconds for requests in flight.
func (s *Server) Close() error {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Past the grace period close what is left: a spare connection that
	// never sent a request counts as active for its first five seconds.
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
	<-done
	return nil
}

// ServeHTTP is the one gate: security headers on every answer, 421 for a
// Host that is neither the bound nor the public origin, 405 for any method
// but GET and HEAD, then the routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	s.mu.Lock()
	hostOK := s.hosts[strings.ToLower(r.Host)]
	s.mu.Unlock()
	if !hostOK {
		s.log.Warn("observer refused a request", slog.String("why", "host"), slog.Int("status", http.StatusMisdirectedRequest))
		plain(w, http.StatusMisdirectedRequest, "421 misdirected request: this server answers only its own origin\n")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "405 method not allowed: the run library is read-only\n")
		return
	}
	s.route(w, r)
}

func plain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func notFound(w http.ResponseWriter) { plain(w, http.StatusNotFound, notFoundBody) }

// segments splits the escaped path into unescaped segments; a segment
// that does not unescape, or unescapes to hold a slash, fails.
func segments(r *http.Request) ([]string, bool) {
	p := r.URL.EscapedPath()
	if p == "/" {
		return nil, true
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, part := range parts {
		u, err := url.PathUnescape(part)
		if err != nil || u == "" || strings.ContainsAny(u, "/\\") {
			return nil, false
		}
		parts[i] = u
	}
	return parts, true
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	seg, ok := segments(r)
	switch {
	case !ok:
		notFound(w)
	case len(seg) == 0:
		s.index(w, r)
	case len(seg) == 1 && seg[0] == "style.css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(styleCSS)))
		_, _ = w.Write(styleCSS)
	case len(seg) == 1 && seg[0] == "history.json":
		s.history(w, r)
	case len(seg) == 2 && seg[0] == "runs":
		s.run(w, seg[1])
	case len(seg) == 4 && seg[0] == "runs" && seg[2] == "screenshots":
		s.screenshot(w, seg[1], seg[3])
	default:
		notFound(w)
	}
}

type indexPage struct {
	Plan     Plan
	Filter   Filter
	Runs     []Summary
	Error    string
	Statuses []string
	Effects  []string
	Receipts []string
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	page := indexPage{Plan: s.plan, Statuses: statusValues, Effects: effectsValues, Receipts: receiptValues}
	f, err := ParseFilter(r.URL.Query())
	status := http.StatusOK
	if err != nil {
		page.Error, status = err.Error(), http.StatusBadRequest
	} else {
		page.Filter = s.lib.redacted(f)
		if page.Runs, err = s.lib.Summaries(f); err != nil {
			s.log.Error("observer index", slog.String("error", err.Error()))
			plain(w, http.StatusInternalServerError, "500 the run library could not be read\n")
			return
		}
	}
	s.render(w, status, "index.html", page)
}

// History is history.json: the served runs the filter keeps, newest first.
type History struct {
	SchemaVersion int       `json:"schema_version"`
	Mode          Mode      `json:"mode"`
	Safe          bool      `json:"safe"`
	Runs          []Summary `json:"runs"`
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	f, err := ParseFilter(r.URL.Query())
	if err != nil {
		plain(w, http.StatusBadRequest, "400 "+err.Error()+"\n")
		return
	}
	runs, err := s.lib.Summaries(f)
	if err != nil {
		s.log.Error("observer history", slog.String("error", err.Error()))
		plain(w, http.StatusInternalServerError, "500 the run library could not be read\n")
		return
	}
	raw, err := json.MarshalIndent(History{SchemaVersion: HistorySchemaVersion, Mode: s.plan.Mode, Safe: s.plan.Safe, Runs: runs}, "", "  ")
	if err != nil {
		plain(w, http.StatusInternalServerError, "500 encode history\n")
		return
	}
	raw = append(raw, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	_, _ = w.Write(raw)
}

func (s *Server) run(w http.ResponseWriter, id string) {
	run, err := s.lib.Run(id)
	if err != nil {
		notFound(w)
		return
	}
	s.render(w, http.StatusOK, "run.html", struct {
		Plan Plan
		Run  *Run
	}{s.plan, run})
}

func (s *Server) screenshot(w http.ResponseWriter, id, name string) {
	raw, err := s.lib.Screenshot(id, name)
	if err != nil {
		notFound(w)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	_, _ = w.Write(raw)
}

// render executes a page into memory first, so a template error never
// sends half a page.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		s.log.Error("observer render", slog.String("page", name), slog.String("error", err.Error()))
		plain(w, http.StatusInternalServerError, "500 the page could not be rendered\n")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// when shows an RFC 3339 time to the second, in UTC; any other text as it
// is.
func when(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}
