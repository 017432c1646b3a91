package mcpserver_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mcpserver"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// directory adapts the principal directory to the server's
// authenticator, as `cua mcp` does.
type directory struct{ d *principal.Directory }

func (a directory) Authenticate(ctx context.Context, tok string) (string, error) {
	p, err := a.d.Authenticate(ctx, tok)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// principals adds each name as an operator to the bundle's SQLite store
// (through a connection of its own, as another process would) and returns
// a directory over the store with their tokens by name.
func principals(t *testing.T, tb *testBundle, names ...string) (*principal.Directory, map[string]string) {
	t.Helper()
	st, err := sqlite.Open(tb.ctx, tb.dbPath, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	dir := principal.NewDirectory(st, nil)
	tokens := map[string]string{}
	for _, n := range names {
		if tokens[n], err = dir.Add(tb.ctx, principal.Principal{Name: "root@test"}, n, principal.Operator); err != nil {
			t.Fatal(err)
		}
	}
	return dir, tokens
}

// bearer is an HTTP client that sends token on every request.
func bearer(token string) *http.Client {
	return &http.Client{Transport: bearerTransport{token}}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// syncBuffer is a log the server writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serverWithLog is the bundle's server logging to w.
func serverWithLog(t *testing.T, tb *testBundle, w io.Writer) *mcpserver.Server {
	t.Helper()
	l := launcher(t)
	srv, err := mcpserver.New(mcpserver.Config{Catalog: tb.cat, Open: func(*domain.Capability) pipeline.Opener { return l.Open },
		BaseURL: tb.app.URL(), DataDir: tb.dataDir, Secrets: demoSecrets, Log: w, Version: "test", MaxSessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestHTTPNeedsPrincipal: over real HTTP on 127.0.0.1 with a real
// principal directory on SQLite, a request without a token, with garbage,
// with an unknown name's or a disabled principal's token gets 401 with
// WWW-Authenticate Bearer (the same answer for each); a valid principal
// token lists the tools; and a session alice opened is refused to bob's
// token.
func TestHTTPNeedsPrincipal(t *testing.T) {
	t.Parallel()
	tb := setup(t, 1)
	dir, tokens := principals(t, tb, "alice", "bob", "carol")
	if err := dir.Disable(tb.ctx, principal.Principal{Name: "root@test"}, "carol"); err != nil {
		t.Fatal(err)
	}
	ln, err := mcpserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.srv.Serve(tb.ctx, ln, nil); err == nil || !strings.Contains(err.Error(), "authenticator") {
		t.Errorf("serving without an authenticator: %v", err)
	}
	ln.Close()
	endpoint := serveHTTP(t, tb, dir)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	post := func(auth, session string) (int, http.Header, string) {
		req, _ := http.NewRequestWithContext(tb.ctx, http.MethodPost, endpoint, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	var first string
	for _, tc := range []struct{ name, auth string }{
		{"no token", ""},
		{"not bearer", "Basic YWxpY2U6eA=="},
		{"garbage", "Bearer nope"},
		{"unknown name", "Bearer cuap_dave_" + strings.Repeat("ab", 32)},
		{"disabled principal", "Bearer " + tokens["carol"]},
	} {
		code, hdr, body := post(tc.auth, "")
		if code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("%s: %d %q, want 401 with WWW-Authenticate Bearer", tc.name, code, hdr.Get("WWW-Authenticate"))
		}
		if first == "" {
			first = body
		} else if body != first {
			t.Errorf("%s: answer %q differs from %q", tc.name, body, first)
		}
	}
	cs, _ := client(t, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, HTTPClient: bearer(tokens["alice"])})
	if got := names(t, cs); !slices.Equal(got, []string{lookup}) {
		t.Fatalf("alice lists %v, want [%s]", got, lookup)
	}
	if code, _, body := post("Bearer "+tokens["bob"], cs.ID()); code != http.StatusForbidden {
		t.Errorf("bob in alice's session %s: %d %s, want 403", cs.ID(), code, body)
	}
}
