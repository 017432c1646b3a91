package mockapp

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// rawRequest sends one request with exact Host and Origin headers.
func (b *testBundle) rawRequest(tb testing.TB, method, path, host, origin, contentType, body string) response {
	tb.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := b.newClient(tb).Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func TestGuardCrossSiteArmIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	// What a cross-site page's <form enctype="text/plain"> sends.
	r := b.rawRequest(t, http.MethodPost, "/_control/arm", "", "http://evil.example", "text/plain",
		`{"fault":"transient_load","count":-1,"x":"="}`)
	if r.status != http.StatusForbidden || !strings.Contains(r.body, "evil.example") {
		t.Fatalf("cross-site arm = %d %q, want 403 naming the origin", r.status, r.body)
	}
	for f, n := range b.state(t).Faults {
		if n != 0 {
			t.Errorf("fault %s armed (%d) by a cross-site POST", f, n)
		}
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(b.base, "http://"))
	own := "http://127.0.0.1:" + port
	other, _ := strconv.Atoi(port)
	tests := []struct {
		name   string
		method string
		path   string
		host   string
		origin string
		want   int
	}{
		{"own host", http.MethodGet, "/", "", "", http.StatusOK},
		{"localhost alias", http.MethodGet, "/", "localhost:" + port, "", http.StatusOK},
		{"ipv6 loopback alias", http.MethodGet, "/", "[::1]:" + port, "", http.StatusOK},
		{"dns rebinding", http.MethodGet, "/", "evil.example:" + port, "", http.StatusMisdirectedRequest},
		{"rebinding on control", http.MethodGet, "/_control/state", "evil.example:" + port, "", http.StatusMisdirectedRequest},
		{"rebinding on automation", http.MethodGet, "/_automation/state", "evil.example:" + port, "", http.StatusMisdirectedRequest},
		{"other port", http.MethodGet, "/", "127.0.0.1:" + strconv.Itoa(other+1), "", http.StatusMisdirectedRequest},
		{"no port", http.MethodGet, "/", "127.0.0.1", "", http.StatusMisdirectedRequest},
		{"own origin form", http.MethodPost, searchPath, "", own, http.StatusSeeOther},
		{"no origin form", http.MethodPost, searchPath, "", "", http.StatusSeeOther},
		{"cross-site form", http.MethodPost, searchPath, "", "http://evil.example", http.StatusForbidden},
		{"other port origin", http.MethodPost, "/_control/reset", "", "http://127.0.0.1:" + strconv.Itoa(other+1), http.StatusForbidden},
		{"null origin", http.MethodPost, "/_automation/act", "", "null", http.StatusForbidden},
		{"cross-site GET passes", http.MethodGet, "/_control/state", "", "http://evil.example", http.StatusOK},
		{"own origin reset", http.MethodPost, "/_control/reset", "", own, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ct := "", ""
			if tt.method == http.MethodPost {
				body, ct = "member=12345", "application/x-www-form-urlencoded"
				if strings.HasPrefix(tt.path, "/_") {
					body, ct = "{}", "application/json"
				}
			}
			req, err := http.NewRequest(tt.method, b.base+tt.path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			c := b.newClient(t)
			if tt.path == searchPath {
				b.signOnWith(t, c)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s Host %q Origin %q = %d, want %d", tt.method, tt.path, tt.host, tt.origin, resp.StatusCode, tt.want)
			}
		})
	}
}

func TestHostAllowed(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T, addr string) *Server {
		s, err := New(Options{Addr: addr})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	port := func(s *Server) string {
		_, p, _ := net.SplitHostPort(strings.TrimPrefix(s.URL(), "http://"))
		return p
	}
	loop := open(t, "127.0.0.1:0")
	wild := open(t, "0.0.0.0:0")
	unopened, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		s    *Server
		host string
		want bool
	}{
		{loop, "127.0.0.1:" + port(loop), true},
		{loop, "localhost:" + port(loop), true},
		{loop, "127.0.0.2:" + port(loop), true},
		{loop, "evil.example:" + port(loop), false},
		{loop, "10.0.0.1:" + port(loop), false},
		{wild, "10.0.0.1:" + port(wild), true},
		{wild, "localhost:" + port(wild), true},
		{wild, "evil.example:" + port(wild), false},
		{wild, "10.0.0.1:1", false},
		{unopened, "127.0.0.1:1234", true},
		{unopened, "localhost:80", true},
		{unopened, "example.com:80", false},
	}
	for _, tt := range tests {
		if got := tt.s.hostAllowed(tt.host); got != tt.want {
			t.Errorf("hostAllowed(%q) on %s = %v, want %v", tt.host, tt.s.opts.Addr, got, tt.want)
		}
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:8811": true, "localhost:8811": true, "[::1]:8811": true,
		"0.0.0.0:8811": false, ":8811": false, "192.168.1.5:8811": false, "example.com:80": false, "nonsense": false,
	} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
