package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mcpserver"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/toolspec"
)

const (
	examples  = "../../examples/capabilities"
	lookup    = "memberdesk_savings_balance"
	lookupRef = "memberdesk.savings_balance@1.2.0"
)

// One Chromium for the test binary (STYLE rule 22): every call opens its
// own browser context in it.
var (
	shared     *launch.Launcher
	sharedErr  error
	sharedOnce sync.Once
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(serveChild())
	}
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	os.Exit(code)
}

// launcher is the shared browser, started (warm) under a context that
// outlives every test.
func launcher(tb testing.TB) *launch.Launcher {
	tb.Helper()
	sharedOnce.Do(func() {
		shared = launch.New(launch.Options{Logger: testLogger(nil)})
		sharedErr = warm(context.Background(), shared)
	})
	if sharedErr != nil {
		tb.Fatalf("start Chromium: %v", sharedErr)
	}
	return shared
}

func warm(ctx context.Context, l *launch.Launcher) error {
	s, err := l.Open(ctx)
	if err != nil {
		return err
	}
	s.Close()
	return nil
}

// testLog is where runs log: stderr with CUA_TEST_LOG set.
func testLog() io.Writer {
	if os.Getenv("CUA_TEST_LOG") == "" {
		return nil
	}
	return os.Stderr
}

func testLogger(*redact.Redactor) *slog.Logger {
	if os.Getenv("CUA_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// secrets are the mock app's credentials, resolved only inside dispatch.
type secrets map[string]string

func (m secrets) Secret(ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set", ref)
}

var demoSecrets = secrets{"corebank_operator": mockapp.DefaultOperator, "corebank_password": mockapp.DefaultPassword}

type testBundle struct {
	ctx     context.Context
	app     *mockapp.Server
	appc    *mockapp.Client
	cat     *catalog.Catalog
	dbPath  string
	dataDir string
	srv     *mcpserver.Server
}

// setup starts a MemberDesk of the test's own and a catalog holding the
// three example capabilities with approve(d) applied (by default the
// savings lookup approved without bounds, the others not approved), and an
// MCP server over both.
func setup(t *testing.T, maxSessions int, approve ...func(*testBundle)) *testBundle {
	t.Helper()
	tb := &testBundle{ctx: t.Context(), dataDir: t.TempDir()}
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	tb.app, tb.appc = app, mockapp.NewClient(app.URL(), nil)
	tb.dbPath = filepath.Join(tb.dataDir, "cua.db")
	st, err := sqlite.Open(tb.ctx, tb.dbPath, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if tb.cat, err = catalog.New(catalog.Config{Store: st, User: func() string { return "alice" }}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"corebank.auth.sign_on.yaml", "memberdesk.savings_balance.yaml", "memberdesk.transfer_funds.yaml"} {
		if _, err := tb.cat.AddFile(tb.ctx, filepath.Join(examples, f)); err != nil {
			t.Fatal(err)
		}
	}
	if len(approve) == 0 {
		approve = append(approve, func(tb *testBundle) { tb.approve(t, lookupRef, catalog.ApproveParams{FromEval: true}) })
	}
	for _, a := range approve {
		a(tb)
	}
	tb.srv = tb.server(t, mcpserver.Config{MaxSessions: maxSessions})
	return tb
}

// server is an MCP server over the bundle's catalog, MemberDesk and the
// shared browser, with cfg's other settings.
func (tb *testBundle) server(t *testing.T, cfg mcpserver.Config) *mcpserver.Server {
	t.Helper()
	l := launcher(t)
	cfg.Catalog, cfg.Open, cfg.BaseURL, cfg.DataDir = tb.cat, func(*domain.Capability) pipeline.Opener { return l.Open }, tb.app.URL(), tb.dataDir
	cfg.Secrets, cfg.Log, cfg.Version = demoSecrets, testLog(), "test"
	srv, err := mcpserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// approve records the eval successes a standing approval needs (as the
// catalog's own tests do), then approves ref with p.
func (tb *testBundle) approve(t *testing.T, ref string, p catalog.ApproveParams) store.Approval {
	t.Helper()
	l, _, err := tb.cat.Resolve(tb.ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	for i := range catalog.MinEvalRuns {
		g := tb.cat.Gate(catalog.RunParams{Eval: true})
		id := fmt.Sprintf("eval-%s-%d-%d", l.Capability.ID, time.Now().UnixNano(), i)
		if _, _, err := g.Begin(tb.ctx, id, l, nil, ""); err != nil {
			t.Fatal(err)
		}
		if err := g.End(tb.ctx, &domain.RunRecord{RunID: id, Status: domain.StatusSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := tb.cat.Approve(tb.ctx, ref, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
}

func (p *progressLog) add(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, r.Params.Message)
}

func (p *progressLog) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

// connect connects an SDK client to the server in memory.
func (tb *testBundle) connect(t *testing.T) (*mcp.ClientSession, *progressLog) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := tb.srv.MCP().Connect(tb.ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	if err := tb.srv.Sync(tb.ctx); err != nil {
		t.Fatal(err)
	}
	return client(t, ct)
}

func client(t *testing.T, tr mcp.Transport) (*mcp.ClientSession, *progressLog) {
	t.Helper()
	pl := &progressLog{}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: pl.add})
	cs, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, pl
}

// call calls a tool and decodes its structured result.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any, token any) (toolspec.Result, *mcp.CallToolResult) {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var r toolspec.Result
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("structured content %s: %v", data, err)
	}
	return r, res
}

func names(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// requests is how many requests MemberDesk has served.
func (tb *testBundle) requests(t *testing.T) int {
	t.Helper()
	st, err := tb.appc.State(tb.ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range st.Requests {
		n += c
	}
	return n
}

func mcpParams(name string, args any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: name, Arguments: args}
}
