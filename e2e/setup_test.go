// Package e2e drives the real cua engine and binary, real Chromium and the
// MemberDesk mock app over real HTTP on 127.0.0.1.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/browser"
)

const (
	examples = "../examples/capabilities"
	operator = "OP1001"
	password = "teller-pass-1"
)

var (
	sharedBrowser *browser.Browser
	browserErr    error
	binPath       string
)

func TestMain(m *testing.M) {
	if _, err := os.Stat("/usr/bin/chromium"); err != nil && os.Getenv("CUA_BROWSER") == "" {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "e2e: /usr/bin/chromium is missing under CI")
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "e2e: skipping: no Chromium (run make deps)")
		os.Exit(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sharedBrowser, browserErr = browser.Launch(ctx, browser.Options{})
	dir, err := os.MkdirTemp("", "cua-e2e-bin-")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "cua")
	build := exec.Command("go", "build", "-o", binPath, "../cmd/cua")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build cua:", err)
		os.Exit(1)
	}
	code := m.Run()
	if sharedBrowser != nil {
		sharedBrowser.Close()
	}
	cancel()
	os.RemoveAll(dir)
	os.Exit(code)
}

// bundle is one test's world: its own mock app (and a client of its
// control API), library and data dir.
type bundle struct {
	app     *mockapp.Server
	ctl     *mockapp.Client
	lib     *replay.DirLibrary
	dataDir string
	logs    *syncBuffer
	red     *redact.Redactor
}

func setup(t *testing.T, opts mockapp.Options) *bundle {
	t.Helper()
	if browserErr != nil {
		t.Fatalf("browser: %v", browserErr)
	}
	if opts.Operator == "" {
		opts.Operator, opts.Password = operator, password
	}
	app, err := mockapp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	lib, err := replay.LoadDir(examples)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{app: app, ctl: mockapp.NewClient(app.URL(), nil), lib: lib, dataDir: t.TempDir(), logs: &syncBuffer{}, red: redact.New()}
}

type secrets map[string]string

func (s secrets) Secret(ref string) (string, error) {
	if v, ok := s[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("no secret %q", ref)
}

type runSpec struct {
	cap      *capability.Loaded
	inputs   map[string]string
	irrev    bool
	approval *policy.Approval
	gates    []string
	lease    *hitl.Lease
	holder   string
	wrap     func(surface.Surface) surface.Surface
	password string
	stepWait time.Duration
}

func (b *bundle) run(t *testing.T, spec runSpec) *domain.RunRecord {
	t.Helper()
	return runOn(t, b, b.app.URL(), spec)
}

// runOn replays spec against the app at baseURL in a fresh session of the
// shared browser.
func runOn(t *testing.T, b *bundle, baseURL string, spec runSpec) *domain.RunRecord {
	t.Helper()
	if b.red == nil {
		b.red = redact.New()
	}
	var lib replay.Library
	if b.lib != nil {
		lib = b.lib
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // one lookup; only a hang meets it
	defer cancel()
	sess, err := sharedBrowser.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var s surface.Surface = sess
	if spec.wrap != nil {
		s = spec.wrap(s)
	}
	pw := spec.password
	if pw == "" {
		pw = password
	}
	logger := slog.New(redact.NewHandler(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}), b.red))
	rec, err := replay.Run(ctx, replay.Options{
		Capability: spec.cap, Library: lib, Inputs: spec.inputs, BaseURL: baseURL, Surface: s,
		Secrets: secrets{"corebank_operator": operator, "corebank_password": pw}, Redactor: b.red,
		DataDir: b.dataDir, AllowIrreversible: spec.irrev, Approval: spec.approval, ReleasedGates: spec.gates,
		Lease: spec.lease, Holder: spec.holder, RunID: fmt.Sprintf("run-%d", time.Now().UnixNano()),
		Logger: logger, StepWait: spec.stepWait,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// state reads the app's control state.
func (b *bundle) state(t *testing.T) mockapp.State {
	t.Helper()
	st, err := b.ctl.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// arm arms fault to let after eligible requests through, then fire count
// times.
func (b *bundle) arm(t *testing.T, fault string, count, after int) {
	t.Helper()
	if err := b.ctl.Arm(t.Context(), fault, count, after); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) ledgerLen(t *testing.T) int {
	t.Helper()
	l, err := b.ctl.Ledger(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

func (b *bundle) noticeAcks(t *testing.T) int {
	t.Helper()
	return b.state(t).NoticeAcknowledged
}

func load(t *testing.T, name string) *capability.Loaded {
	t.Helper()
	l, err := capability.Load(filepath.Join(examples, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// derive writes a changed, re-sealed copy of a reference capability: each
// pair of edits replaces old text with new; the hash line is dropped and the
// copy sealed again.
func derive(t *testing.T, name string, edits ...string) *capability.Loaded {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(examples, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("derive %s: %q not found", name, edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "content_hash:") {
			kept = append(kept, line)
		}
	}
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatal(err)
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

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
