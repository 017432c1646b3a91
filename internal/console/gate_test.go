package console

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// principals is the principal directory of one test database, and the
// tokens of the principals the tests made in it (by name).
type principals struct {
	st     store.Store
	dir    *principal.Directory
	clock  *testClock
	mu     sync.Mutex
	tokens map[string]string
}

// directories holds each test database's principals, by file path: a
// console restarted on the same file signs the same people in.
var directories sync.Map // path → *principals

// testClock is a clock a test moves forward.
type testClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.at = c.at.Add(d)
	c.mu.Unlock()
}

// token returns name's token, adding name as an operator on first use.
func (p *principals) token(t *testing.T, name string) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if tok, ok := p.tokens[name]; ok {
		return tok
	}
	tok, err := p.dir.Add(t.Context(), principal.Principal{Name: "test@host"}, name, principal.Operator)
	if err != nil {
		t.Fatalf("add principal %s: %v", name, err)
	}
	p.tokens[name] = tok
	return tok
}

// authenticator adapts the directory as internal/cmd/console does: a
// locked principal's error says until when, read from the store.
func (p *principals) authenticator() Authenticator {
	return AuthFunc(func(ctx context.Context, token string) (Identity, error) {
		who, err := p.dir.Authenticate(ctx, token)
		if errors.Is(err, principal.ErrLocked) {
			name, _ := principal.ParseToken(token)
			rec, gerr := p.st.GetPrincipal(ctx, name)
			if gerr != nil {
				return Identity{}, errors.Join(err, gerr)
			}
			return Identity{}, &LockedError{Until: rec.LockedUntil, Err: err}
		}
		if err != nil {
			return Identity{}, err
		}
		return Identity{Name: who.Name, Role: string(who.Role)}, nil
	})
}

// openConsole opens a console over a broker on the SQLite file path,
// signing in the principals of that file.
func openConsole(t *testing.T, path string) (*Server, *sqlite.DB) {
	t.Helper()
	return openConsoleWith(t, path, nil)
}

// openConsoleWith is openConsole with edit changing the config first.
func openConsoleWith(t *testing.T, path string, edit func(*Config)) (*Server, *sqlite.DB) {
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
	ps := principalsAt(path, db)
	cfg := Config{Addr: "127.0.0.1:0", Auth: ps.authenticator(), Broker: br,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	consoles.Store(srv, ps)
	return srv, db
}

// principalsAt returns the principals of the database at path (db open on
// it), with a directory over db on a clock of the test's.
func principalsAt(path string, db store.Store) *principals {
	clock := &testClock{at: time.Now()}
	ps, _ := directories.LoadOrStore(path, &principals{st: db, dir: principal.NewDirectory(db, clock.now), clock: clock, tokens: map[string]string{}})
	return ps.(*principals)
}

// consoles maps each test console to its file's principals.
var consoles sync.Map // *Server → *principals

func principalsOf(t *testing.T, srv *Server) *principals {
	t.Helper()
	ps, ok := consoles.Load(srv)
	if !ok {
		t.Fatal("a console the tests did not open")
	}
	return ps.(*principals)
}

// tokenOf returns the token of principal name in srv's database, making
// name an operator on first use.
func tokenOf(t *testing.T, srv *Server, name string) string {
	t.Helper()
	return principalsOf(t, srv).token(t, name)
}

// client is a signed-in operator's HTTP client with its CSRF token.
type client struct {
	srv  *Server
	http *http.Client
	csrf string
	last *http.Response // the last sign-in answer (its body read)
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf" content="([0-9a-f]+)">`)
var preField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// signIn signs the principal name in with its own token (made on first
// use) in a browser of its own.
func signIn(t *testing.T, srv *Server, name string) *client {
	t.Helper()
	c, code, page := trySignIn(t, srv, tokenOf(t, srv, name))
	m := csrfMeta.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("sign-in as %s failed: %d\n%s", name, code, page)
	}
	if !strings.Contains(page, `<meta name="operator" content="`+name+`">`) {
		t.Fatalf("signed in as %s, the page names someone else:\n%s", name, page)
	}
	c.csrf = m[1]
	return c
}

// trySignIn posts token to the sign-in form from a new browser and returns
// it with the status and page the browser ends on.
func trySignIn(t *testing.T, srv *Server, token string) (*client, int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &client{srv: srv, http: srv.testClient(jar)}
	body := c.get(t, "/")
	m := preField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("sign-in page has no CSRF field:\n%s", body)
	}
	form := url.Values{"csrf": {m[1]}, "token": {token}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL())
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	c.last = res
	return c, res.StatusCode, string(page)
}

// testClient is an HTTP client of the console (trusting its own
// certificate when it serves TLS).
func (s *Server) testClient(jar http.CookieJar) *http.Client {
	c := &http.Client{Jar: jar}
	if s.cfg.TLS != nil {
		pool := x509.NewCertPool()
		pool.AddCert(s.cfg.TLS.Leaf)
		c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
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
	if code, _ := stranger.post(t, "/signin", own, "", "token="+tokenOf(t, srv, "alice")); code != http.StatusForbidden {
		t.Errorf("sign-in without its CSRF token: %d, want 403", code)
	}
	req, _ := http.NewRequest(http.MethodGet, own+"/", nil)
	req.Host = "attacker.example:80"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("a rebinding Host: %v %v, want 403", res.StatusCode, err)
	}
}

// TestNewRefusesRemote: a non-loopback address needs AllowRemote and TLS,
// refused before anything opens with the flags named; a console needs an
// authenticator.
func TestNewRefusesRemote(t *testing.T) {
	t.Parallel()
	br, _ := hitl.NewBroker(hitl.BrokerConfig{Queue: hitlstore.New(nil), Redact: func(s string) string { return s }, NewID: func() string { return "x" }})
	auth := AuthFunc(func(context.Context, string) (Identity, error) { return Identity{}, errors.New("no") })
	cert := selfSigned(t)
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Addr: "0.0.0.0:8812", Auth: auth, Broker: br}, "--allow-remote"},
		{Config{Addr: "0.0.0.0:8812", AllowRemote: true, Auth: auth, Broker: br}, "--tls-cert and --tls-key"},
		{Config{Addr: "192.0.2.1:8812", AllowRemote: true, Auth: auth, Broker: br}, "needs TLS"},
		{Config{Addr: "127.0.0.1:0", Broker: br}, "authenticator"},
	} {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s, remote %v) = %v, want %q", tt.cfg.Addr, tt.cfg.AllowRemote, err, tt.want)
		}
	}
	if _, err := New(Config{Addr: "0.0.0.0:0", AllowRemote: true, TLS: cert, Auth: auth, Broker: br}); err != nil {
		t.Errorf("AllowRemote with TLS: %v", err)
	}
}

// selfSigned returns a certificate for 127.0.0.1 and localhost, written
// as PEM files and read back by LoadTLS.
func selfSigned(t *testing.T) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cua console test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTLS(keyFile, certFile); err == nil {
		t.Fatal("LoadTLS took the key for the certificate")
	}
	cert, err := LoadTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
