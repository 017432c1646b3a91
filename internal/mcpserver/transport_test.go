package mcpserver_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mcpserver"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// The stdio test runs this test binary again as the server: childEnv says
// so, and names the catalog, the data dir and MemberDesk.
const (
	childEnv = "CUA_MCPSERVER_TEST_CHILD"
	childDB  = "CUA_MCPSERVER_TEST_DB"
	childApp = "CUA_MCPSERVER_TEST_APP"
)

// serveChild serves MCP over its stdin and stdout, as `cua mcp` does.
func serveChild() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runChild(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func runChild(ctx context.Context) error {
	st, err := sqlite.Open(ctx, os.Getenv(childDB), store.Config{})
	if err != nil {
		return err
	}
	defer st.Close()
	cat, err := catalog.New(catalog.Config{Store: st})
	if err != nil {
		return err
	}
	l := launch.New(launch.Options{})
	defer l.Close()
	if err := warm(ctx, l); err != nil {
		return err
	}
	srv, err := mcpserver.New(mcpserver.Config{Catalog: cat, Open: func(*domain.Capability) pipeline.Opener { return l.Open }, BaseURL: os.Getenv(childApp),
		DataDir: os.Getenv("CUA_DATA_DIR"), Secrets: demoSecrets})
	if err != nil {
		return err
	}
	return srv.Run(ctx, &mcp.StdioTransport{})
}

// The SDK's own client over a real stdio pipe to a server process: list,
// then a real lookup.
func TestStdio(t *testing.T) {
	t.Parallel()
	tb := setup(t, 1)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childDB+"="+tb.dbPath, childApp+"="+tb.app.URL(), "CUA_DATA_DIR="+tb.dataDir)
	cmd.Stderr = os.Stderr
	// Close waits this long for the child to exit after its stdin closes
	// (it closes its browser and store first) before SIGTERM and SIGKILL,
	// which would leave its Chromium behind; an exit that comes sooner
	// ends the wait at once.
	cs, progress := client(t, &mcp.CommandTransport{Command: cmd, TerminateDuration: 60 * time.Second})
	if got := names(t, cs); !slices.Equal(got, []string{lookup}) {
		t.Fatalf("tools = %v, want [%s]", got, lookup)
	}
	r, _ := call(t, cs, lookup, map[string]any{"member_id": "12345"}, 7)
	if r.Status != domain.StatusSuccess || fmt.Sprint(r.Outputs) != fmt.Sprint(wantOutputs) {
		t.Fatalf("result = %+v", r)
	}
	if len(progress.all()) == 0 {
		t.Error("no progress notification over stdio")
	}
	if run, err := tb.cat.Run(tb.ctx, r.RunID); err != nil || run.Status != domain.StatusSuccess {
		t.Errorf("the child's run is not in the shared index: %+v %v", run, err)
	}
}

// serveHTTP serves tb's server over streamable HTTP on a loopback port,
// checking bearer tokens against a real principal directory over the
// bundle's SQLite store, until the test's cleanup; it returns the
// endpoint.
func serveHTTP(t *testing.T, tb *testBundle, dir *principal.Directory) string {
	t.Helper()
	ln, err := mcpserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Not tb.ctx: t.Context ends before the cleanups run, and this test's
	// cleanup is what ends serving.
	ctx, cancel := context.WithCancel(context.WithoutCancel(tb.ctx))
	done := make(chan error, 1)
	go func() { done <- tb.srv.Serve(ctx, ln, directory{dir}) }()
	t.Cleanup(func() {
		// A fresh connection that never sends a request (a client's spare
		// dial) must not make shutdown fail: CI saw "context deadline
		// exceeded" here.
		idle, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// Streamable HTTP on loopback with alice's principal token: list, a real
// call (logged with alice), bad input, and the Host and Origin gate
// refusing foreign ones even with the token.
func TestHTTP(t *testing.T) {
	t.Parallel()
	tb := setup(t, 2)
	log := &syncBuffer{}
	tb.srv = serverWithLog(t, tb, log)
	dir, tokens := principals(t, tb, "alice")
	endpoint := serveHTTP(t, tb, dir)
	cs, _ := client(t, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, HTTPClient: bearer(tokens["alice"])})
	if got := names(t, cs); !slices.Equal(got, []string{lookup}) {
		t.Fatalf("tools = %v", got)
	}
	r, _ := call(t, cs, lookup, map[string]any{"member_id": "12345"}, "h1")
	if r.Status != domain.StatusSuccess || fmt.Sprint(r.Outputs) != fmt.Sprint(wantOutputs) {
		t.Fatalf("result = %+v", r)
	}
	if want := "principal=alice tool=" + lookup + " run_id=" + r.RunID + " status=SUCCESS"; !strings.Contains(log.String(), want) {
		t.Errorf("the call is not logged with its principal (%q):\n%s", want, log)
	}
	before := tb.requests(t)
	r, _ = call(t, cs, lookup, map[string]any{"member_id": "1234"}, nil)
	if r.FailureCode != string(domain.CodeInputInvalid) || tb.requests(t) != before {
		t.Fatalf("bad input: %+v, %d requests", r, tb.requests(t)-before)
	}
	port := endpoint[strings.LastIndex(endpoint, ":")+1:]
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"foreign host", "evil.example:" + port, "", http.StatusForbidden},
		{"foreign origin", "", "http://evil.example", http.StatusForbidden},
		{"other port", "127.0.0.1:1", "", http.StatusForbidden},
		{"https origin", "", "https://127.0.0.1:" + port, http.StatusForbidden},
		{"localhost origin", "localhost:" + port, "http://localhost:" + port, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
			req, _ := http.NewRequestWithContext(tb.ctx, http.MethodPost, endpoint, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+tokens["alice"])
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("status %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8813", "example.com:80", "nonsense"} {
		if ln, err := mcpserver.Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) accepted", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := mcpserver.Listen(addr)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		ln.Close()
	}
}
