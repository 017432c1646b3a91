package mockapp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// testBundle is one real server on 127.0.0.1:0 and a browser-like client.
type testBundle struct {
	srv    *Server
	base   string
	client *http.Client
	logs   *syncBuffer

	mu      sync.Mutex
	secrets []string // passwords posted so far: no response or log may hold one
}

// setup opens a real server with opts (Addr forced to 127.0.0.1:0) and a
// cookie-jar client that does not follow redirects.
func setup(tb testing.TB, opts Options) *testBundle {
	tb.Helper()
	logs := &syncBuffer{}
	opts.Addr = "127.0.0.1:0"
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := New(opts)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	if err := srv.Open(); err != nil {
		tb.Fatalf("Open: %v", err)
	}
	b := &testBundle{srv: srv, base: srv.URL(), logs: logs, secrets: []string{srv.opts.Password}}
	b.client = b.newClient(tb)
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
		for _, secret := range b.secretList() {
			if strings.Contains(logs.String(), secret) {
				tb.Errorf("logs contain a password %q", secret)
			}
		}
	})
	return b
}

// newClient returns another browser: its own cookie jar, no redirects.
func (b *testBundle) newClient(tb testing.TB) *http.Client {
	tb.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatalf("cookiejar: %v", err)
	}
	return &http.Client{
		Jar:     jar,
		Timeout: 60 * time.Second, // above every long poll a test makes (30 s)
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

func (b *testBundle) secretList() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string{}, b.secrets...)
}

// response is a fully read HTTP response.
type response struct {
	status int
	header http.Header
	body   string
}

func (r response) location() string { return r.header.Get("Location") }

// do sends one request with c and checks that no password leaks into the
// response body.
func (b *testBundle) do(tb testing.TB, c *http.Client, method, path string, form url.Values) response {
	tb.Helper()
	var body io.Reader
	if form != nil {
		if pw := form.Get("password"); pw != "" {
			b.mu.Lock()
			b.secrets = append(b.secrets, pw)
			b.mu.Unlock()
		}
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		tb.Fatalf("new request: %v", err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read %s %s: %v", method, path, err)
	}
	for _, secret := range b.secretList() {
		if bytes.Contains(raw, []byte(secret)) {
			tb.Errorf("%s %s: response body contains a password", method, path)
		}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *testBundle) get(tb testing.TB, path string) response {
	tb.Helper()
	return b.do(tb, b.client, http.MethodGet, path, nil)
}

func (b *testBundle) post(tb testing.TB, path string, form url.Values) response {
	tb.Helper()
	if form == nil {
		form = url.Values{}
	}
	return b.do(tb, b.client, http.MethodPost, path, form)
}

// signOn signs the bundle's client on with the valid credentials.
func (b *testBundle) signOn(tb testing.TB) {
	tb.Helper()
	b.signOnWith(tb, b.client)
}

func (b *testBundle) signOnWith(tb testing.TB, c *http.Client) {
	tb.Helper()
	resp := b.do(tb, c, http.MethodPost, signonPath, url.Values{
		"operator": {b.srv.opts.Operator},
		"password": {b.srv.opts.Password},
	})
	if resp.status != http.StatusSeeOther || resp.location() != homePath {
		tb.Fatalf("sign on: status %d location %q, want 303 %s", resp.status, resp.location(), homePath)
	}
}

// control sends a control request with a raw JSON body and decodes the
// JSON answer into out (when out is not nil).
func (b *testBundle) control(tb testing.TB, method, path, body string, out any) int {
	tb.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read: %v", err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

func (b *testBundle) arm(tb testing.TB, fault string, count int) {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"fault": fault, "count": count})
	if status := b.control(tb, http.MethodPost, "/_control/arm", string(body), nil); status != http.StatusOK {
		tb.Fatalf("arm %s %d: status %d", fault, count, status)
	}
}

func (b *testBundle) state(tb testing.TB) State {
	tb.Helper()
	var st State
	if status := b.control(tb, http.MethodGet, "/_control/state", "", &st); status != http.StatusOK {
		tb.Fatalf("state: status %d", status)
	}
	return st
}

func (b *testBundle) ledger(tb testing.TB) []LedgerEntry {
	tb.Helper()
	var out struct {
		Entries []LedgerEntry `json:"entries"`
	}
	if status := b.control(tb, http.MethodGet, "/_control/ledger", "", &out); status != http.StatusOK {
		tb.Fatalf("ledger: status %d", status)
	}
	return out.Entries
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent logging.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// HTML probes. They read the markup the way the accessibility tree names
// things: button/link text, heading text, a role attribute's text.

func hasButton(body, name string) bool {
	return regexp.MustCompile(`<button\b[^>]*>` + regexp.QuoteMeta(name) + `</button>`).MatchString(body)
}

func hasLink(body, name string) bool {
	return regexp.MustCompile(`<a\b[^>]*>` + regexp.QuoteMeta(name) + `</a>`).MatchString(body)
}

func hasHeading(body, name string) bool {
	return strings.Contains(body, "<h1>"+name+"</h1>")
}

func hasRole(body, role, text string) bool {
	return regexp.MustCompile(`<p role="` + role + `"[^>]*>` + regexp.QuoteMeta(text) + `</p>`).MatchString(body)
}

// leafRow matches a label cell / value cell pair, with or without the span
// wrappers of variant b.
var leafRow = regexp.MustCompile(`<tr\b[^>]*><td\b[^>]*>(?:<span\b[^>]*>)?([^<]*)(?:</span>)?</td><td\b[^>]*>(?:<span\b[^>]*>)?([^<]*)(?:</span>)?</td></tr>`)

// tableRows returns the label/value rows of the page's layout tables.
func tableRows(body string) []row {
	var rows []row
	for _, m := range leafRow.FindAllStringSubmatch(body, -1) {
		rows = append(rows, row{m[1], m[2]})
	}
	return rows
}

func rowValue(rows []row, label string) (string, bool) {
	for _, r := range rows {
		if r.Label == label {
			return r.Value, true
		}
	}
	return "", false
}

var (
	idAttr    = regexp.MustCompile(`\bid="([^"]*)"`)
	classAttr = regexp.MustCompile(`\bclass="([^"]*)"`)
)

// selectorHooks returns every id (as "#x") and class (as ".x") in body.
func selectorHooks(body string) map[string]bool {
	out := make(map[string]bool)
	for _, m := range idAttr.FindAllStringSubmatch(body, -1) {
		out["#"+m[1]] = true
	}
	for _, m := range classAttr.FindAllStringSubmatch(body, -1) {
		for _, c := range strings.Fields(m[1]) {
			out["."+c] = true
		}
	}
	return out
}

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "defaults", opts: Options{}},
		{name: "variant b", opts: Options{Variant: "b"}},
		{name: "variant c", opts: Options{Variant: "c"}},
		{name: "unknown variant", opts: Options{Variant: "d"}, wantErr: "Variant"},
		{name: "upper-case variant", opts: Options{Variant: "A"}, wantErr: "Variant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := New(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%+v) error = %v, want one naming %q", tt.opts, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if s.opts.Addr != DefaultAddr || s.opts.Operator != DefaultOperator || s.opts.Password != DefaultPassword {
				t.Errorf("defaults not applied: %+v", s.opts)
			}
			if s.URL() != "" {
				t.Errorf("URL before Open = %q, want empty", s.URL())
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close before Open: %v", err)
			}
		})
	}
}

func TestOpenURLClose(t *testing.T) {
	t.Parallel()
	s, err := New(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+$`).MatchString(s.URL()) {
		t.Errorf("URL = %q, want http://127.0.0.1:PORT", s.URL())
	}
	if err := s.Open(); err == nil {
		t.Error("second Open: want an error")
	}
	resp, err := http.Get(s.URL() + "/")
	if err != nil {
		t.Fatalf("GET /: %v", err)
	}
	resp.Body.Close()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := http.Get(s.URL() + "/"); err == nil {
		t.Error("GET after Close: want a connection error")
	}

	busy, err := New(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := busy.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	taken, err := New(Options{Addr: strings.TrimPrefix(busy.URL(), "http://")})
	if err != nil {
		t.Fatal(err)
	}
	if err := taken.Open(); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("Open on a taken port: error = %v, want a listen error", err)
	}
}

func TestURLOfWildcardAddr(t *testing.T) {
	t.Parallel()
	s, err := New(Options{Addr: ":0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL = %q, want the loopback address", s.URL())
	}
}

func TestHandlerUnderHTTPTest(t *testing.T) {
	t.Parallel()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	resp, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<title>MemberDesk</title>") {
		t.Errorf("GET / through Handler: %d %q", resp.StatusCode, body)
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	tests := []struct {
		name      string
		method    string
		path      string
		want      int
		wantAllow string
		wantText  string
	}{
		{name: "unknown top-level", method: "GET", path: "/nope", want: 404, wantText: "404 not found: no page at /nope"},
		{name: "unknown content", method: "GET", path: "/content/nope", want: 404, wantText: "404 not found"},
		{name: "member without id", method: "GET", path: "/content/member/", want: 404},
		{name: "member sub-path", method: "GET", path: "/content/member/12345/x", want: 404},
		{name: "put root", method: "PUT", path: "/", want: 405, wantAllow: "GET, HEAD"},
		{name: "post nav", method: "POST", path: "/nav", want: 405, wantAllow: "GET, HEAD"},
		{name: "delete search", method: "DELETE", path: "/content/search", want: 405, wantAllow: "GET, HEAD, POST", wantText: "405 method not allowed"},
		{name: "post home", method: "POST", path: "/content/home", want: 405, wantAllow: "GET, HEAD"},
		{name: "get review", method: "GET", path: "/content/transfer/review", want: 405, wantAllow: "POST"},
		{name: "get submit", method: "GET", path: "/content/transfer/submit", want: 405, wantAllow: "POST"},
		{name: "get notice ack", method: "GET", path: "/content/notice/ack", want: 405, wantAllow: "POST"},
		{name: "post member", method: "POST", path: "/content/member/12345", want: 405, wantAllow: "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var form url.Values
			if tt.method != "GET" {
				form = url.Values{}
			}
			resp := b.do(t, b.client, tt.method, tt.path, form)
			if resp.status != tt.want {
				t.Fatalf("%s %s = %d, want %d (%q)", tt.method, tt.path, resp.status, tt.want, resp.body)
			}
			if got := resp.header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
			if !strings.HasPrefix(resp.header.Get("Content-Type"), "text/plain") {
				t.Errorf("Content-Type = %q, want plain text", resp.header.Get("Content-Type"))
			}
			if !strings.Contains(resp.body, tt.wantText) {
				t.Errorf("body %q, want it to contain %q", resp.body, tt.wantText)
			}
		})
	}
}

func TestHeadAndCommonHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	b.signOn(t)
	resp := b.do(t, b.client, http.MethodHead, searchPath, nil)
	if resp.status != http.StatusOK || resp.body != "" {
		t.Errorf("HEAD search = %d %q, want 200 and no body", resp.status, resp.body)
	}
	if resp.header.Get("Cache-Control") != "no-store" || resp.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers = %v, want no-store and nosniff", resp.header)
	}
}
