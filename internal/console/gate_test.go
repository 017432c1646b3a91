package console

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

const testToken = "test-token-0123456789abcdef"

// openConsole opens a console over a broker on the SQLite file path.
func openConsole(t *testing.T, path string) (*Server, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var n atomic.Int64
	red := redact.New()
	br, err := hitl.NewBroker(hitl.BrokerConfig{Queue: hitlstore.New(db), Redact: red.String,
		NewID: func() string { return fmt.Sprintf("w%d-%s", n.Add(1), randHex(4)) }})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Addr: "127.0.0.1:0", Token: testToken, Broker: br,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, db
}

// client is a signed-in operator's HTTP client with its CSRF token.
type client struct {
	srv  *Server
	http *http.Client
	csrf string
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf" content="([0-9a-f]+)">`)
var preField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func signIn(t *testing.T, srv *Server, operator string) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &client{srv: srv, http: &http.Client{Jar: jar}}
	body := c.get(t, "/")
	m := preField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("sign-in page has no CSRF field:\n%s", body)
	}
	form := url.Values{"csrf": {m[1]}, "operator": {operator}, "token": {testToken}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL())
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if m = csrfMeta.FindStringSubmatch(string(page)); m == nil {
		t.Fatalf("sign-in as %s failed: %d\n%s", operator, res.StatusCode, page)
	}
	c.csrf = m[1]
	return c
}

func (c *client) get(t *testing.T, path string) string {
	t.Helper()
	res, err := c.http.Get(c.srv.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// post sends body to path with origin and csrf (either may be empty).
func (c *client) post(t *testing.T, path, origin, csrf, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, c.srv.URL()+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if csrf != "" {
		req.Header.Set(csrfHeader, csrf)
	}
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// dialWS opens the screencast socket of session with origin and csrf.
func (c *client) dialWS(ctx context.Context, session, origin, csrf string) (*websocket.Conn, *http.Response, error) {
	u := strings.Replace(c.srv.URL(), "http://", "ws://", 1) + "/ws?session=" + url.QueryEscape(session)
	if csrf != "" {
		u += "&csrf=" + csrf
	}
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: h})
}

// TestGateRefuses: a foreign Origin, a missing Origin, a missing or wrong
// CSRF token and a browser that never signed in are refused, on POST and
// on the WebSocket; every response carries the security headers.
func TestGateRefuses(t *testing.T) {
	t.Parallel()
	srv, _ := openConsole(t, filepath.Join(t.TempDir(), "cua.db"))
	alice := signIn(t, srv, "alice")
	stranger := &client{srv: srv, http: &http.Client{}}
	own := srv.URL()
	body := `{"session":"s1"}`
	posts := []struct {
		name   string
		c      *client
		origin string
		csrf   string
	}{
		{"foreign Origin", alice, "http://evil.example", alice.csrf},
		{"Origin of another port", alice, "http://127.0.0.1:1", alice.csrf},
		{"no Origin", alice, "", alice.csrf},
		{"no CSRF token", alice, own, ""},
		{"wrong CSRF token", alice, own, strings.Repeat("0", 48)},
		{"not signed in", stranger, own, alice.csrf},
	}
	for _, tt := range posts {
		t.Run("POST "+tt.name, func(t *testing.T) {
			for _, path := range []string{"/api/claim", "/api/release", "/api/resume", "/api/input?session=s1"} {
				if code, _ := tt.c.post(t, path, tt.origin, tt.csrf, body); code != http.StatusForbidden {
					t.Errorf("POST %s: %d, want 403", path, code)
				}
			}
		})
		t.Run("WS "+tt.name, func(t *testing.T) {
			c, res, err := tt.c.dialWS(t.Context(), "s1", tt.origin, tt.csrf)
			if err == nil {
				c.CloseNow()
				t.Fatal("the WebSocket was accepted")
			}
			if res == nil || res.StatusCode != http.StatusForbidden {
				t.Fatalf("WS refusal: %v (%v), want 403", res, err)
			}
		})
	}
	// The same requests with the right Origin and token pass the gate (the
	// session does not exist: 404, not 403).
	if code, _ := alice.post(t, "/api/claim", own, alice.csrf, body); code != http.StatusNotFound {
		t.Errorf("well-formed claim of an absent session: %d, want 404", code)
	}
	if _, res, err := alice.dialWS(t.Context(), "s1", own, alice.csrf); err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("well-formed WS to an absent session: %v, want 404", err)
	}
	res, err := http.Get(own + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q", csp)
	}
	if code, _ := stranger.post(t, "/signin", own, "", "token="+testToken); code != http.StatusForbidden {
		t.Errorf("sign-in without its CSRF token: %d, want 403", code)
	}
	req, _ := http.NewRequest(http.MethodGet, own+"/", nil)
	req.Host = "attacker.example:80"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("a rebinding Host: %v %v, want 403", res.StatusCode, err)
	}
}

// TestNewRefusesRemote: a non-loopback address needs AllowRemote; a short
// token is refused.
func TestNewRefusesRemote(t *testing.T) {
	t.Parallel()
	br, _ := hitl.NewBroker(hitl.BrokerConfig{Queue: hitlstore.New(nil), Redact: func(s string) string { return s }, NewID: func() string { return "x" }})
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Addr: "0.0.0.0:8812", Token: testToken, Broker: br}, "not a loopback"},
		{Config{Addr: "127.0.0.1:0", Token: "short", Broker: br}, "16 characters"},
	} {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want %q", tt.cfg.Addr, err, tt.want)
		}
	}
	if _, err := New(Config{Addr: "0.0.0.0:0", AllowRemote: true, Token: testToken, Broker: br}); err != nil {
		t.Errorf("AllowRemote: %v", err)
	}
}
