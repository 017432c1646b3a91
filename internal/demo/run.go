package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// Config is one run of the demo.
type Config struct {
	// Capabilities is the directory of the reference capabilities; required.
	Capabilities string
	// DataDir is where run evidence goes (runs/), the discovered
	// capability is written (discovered/) and the approval stages keep
	// their catalog (demo/cua.db); required.
	DataDir string
	// Browser is the Chromium executable ("" for the browser package's
	// default: $CUA_BROWSER or /usr/bin/chromium).
	Browser string
	// Discoverer runs the discovery stages from Cassette, the recorded
	// discovery of the savings-balance goal; nil skips them.
	Discoverer Discoverer
	Cassette   string
	// Stages are the replay stages to run; nil runs [Stages].
	Stages []Stage
	// SkipApproval leaves out the approval stages, which otherwise follow
	// the replay stages: five eval replays of the transfer through a
	// SQLite catalog at [CatalogPath], an approval earned from them
	// (amount <= [ApprovalMax]), an unattended transfer inside the bound
	// that posts and one outside it refused before a session opens.
	SkipApproval bool
	// SkipMCP leaves out the agent stages (internal/demo/mcp.go), which
	// otherwise follow the approval stages when Stages is nil (the whole
	// story): an MCP client over stdio lists the tools and calls the
	// savings lookup twice, for outputs and for a business outcome.
	SkipMCP bool
	// Bin is the cua executable the fleet stages run as separate processes
	// (`cua demo` passes its own): the queue stage ([env.fleetStage]), the
	// takeover across processes ([env.takeoverStage]) and, with Desktop,
	// the desktop stage, which follow the agent stages when Stages is nil.
	// "" leaves them out.
	Bin string
	// Desktop is the desktop capability file the desktop stage replays.
	Desktop string
	// Redactor redacts what the engine records and logs; nil: redact.New().
	Redactor *redact.Redactor
	// Logger receives the engine's diagnostics; it should redact through
	// Redactor. Nil discards them.
	Logger *slog.Logger
	// RunID makes a run id per replay; nil: "r" + UTC time + random hex.
	RunID func() string
	// OnStart, when set, is called once the app listens, with its URL.
	OnStart func(appURL string)
	// OnStage, when set, is called after each stage with its 1-based
	// number and result (in order, from Run's goroutine).
	OnStage func(n int, r *Result)
}

// Result is a stage with what its run produced.
type Result struct {
	Stage
	// Record is the run's record, already redacted by the engine; nil when
	// the stage failed before a run or ran no replay.
	Record *domain.RunRecord `json:"record,omitempty"`
	// Pass reports whether the stage behaved as declared; Problem says how
	// it did not.
	Pass    bool   `json:"pass"`
	Problem string `json:"problem,omitempty"`
	// Skipped is set on a stage this machine cannot run (a desktop stage
	// without a desktop session): it passes, and says so in Detail.
	Skipped bool `json:"skipped,omitempty"`
	// Detail is a one-line summary of the result (Problem when it failed).
	Detail string `json:"detail,omitempty"`
}

// Mark is PASS when the stage behaved as declared (SKIP when this machine
// could not run it), else FAIL.
func (r *Result) Mark() string {
	if r.Pass && r.Skipped {
		return "SKIP"
	}
	if r.Pass {
		return "PASS"
	}
	return "FAIL"
}

// Status is the record's status, "-" without a record.
func (r *Result) Status() string {
	if r.Record == nil {
		return "-"
	}
	return string(r.Record.Status)
}

// DurationMS is the record's duration, 0 without a record.
func (r *Result) DurationMS() int64 {
	if r.Record == nil {
		return 0
	}
	return r.Record.DurationMS
}

// Report is the outcome of a demo run.
type Report struct {
	AppURL string
	// Library is the command that opens the run library the demo wrote
	// (`cua observe --data-dir DIR`), LibraryURL where it then serves.
	Library    string
	LibraryURL string
	Stages     []*Result
	// Failed counts the stages that did not behave as declared.
	Failed int
}

// Passed reports whether every stage behaved as declared.
func (r *Report) Passed() bool { return r.Failed == 0 }

func (c Config) validate() error {
	switch {
	case c.Capabilities == "":
		return errors.New("demo: Capabilities: required")
	case c.DataDir == "":
		return errors.New("demo: DataDir: required")
	case c.Discoverer != nil && c.Cassette == "":
		return errors.New("demo: Cassette: required with a Discoverer")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Stages == nil {
		c.Stages = Stages()
	}
	if c.Redactor == nil {
		c.Redactor = redact.New()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.RunID == nil {
		c.RunID = newRunID
	}
	return c
}

// env is what every stage of one run shares.
type env struct {
	cfg  Config
	lib  *replay.DirLibrary
	base string
	app  *mockapp.Client
	br   *browser.Browser
}

// Run starts MemberDesk on 127.0.0.1 and one Chromium, runs every stage
// and then, with a Discoverer, the discovery stages, and last verifies
// every run it made (evidence.VerifyDeployment, with the deployment key
// when there is one: each must be share_ready), and
// reports each result. The error is for a demo that could not start (a missing
// capability, no browser); a stage that misbehaves is a failed [Result].
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	agent := cfg.Stages == nil && !cfg.SkipMCP
	cfg = cfg.withDefaults()
	lib, err := replay.LoadDir(cfg.Capabilities)
	if err != nil {
		return nil, err
	}
	need := make([]string, 0, len(cfg.Stages)+1)
	for _, st := range cfg.Stages {
		need = append(need, st.Capability)
	}
	if !cfg.SkipApproval {
		need = append(need, transferCap)
	}
	for _, id := range need {
		if _, err := lib.Lookup(id); err != nil {
			return nil, fmt.Errorf("demo: %w (run from the repository root or pass --capabilities)", err)
		}
	}
	app, err := mockapp.New(mockapp.Options{Addr: "127.0.0.1:0", Operator: Operator, Password: Password})
	if err != nil {
		return nil, err
	}
	if err := app.Open(); err != nil {
		return nil, err
	}
	defer app.Close()
	br, err := browser.Launch(ctx, browser.Options{ExecPath: cfg.Browser, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("start browser: %w", err)
	}
	defer br.Close()
	if cfg.OnStart != nil {
		cfg.OnStart(app.URL())
	}
	e := &env{cfg: cfg, lib: lib, base: app.URL(), app: mockapp.NewClient(app.URL(), nil), br: br}
	rep := &Report{AppURL: app.URL(), Library: ObserveCommand(cfg.DataDir), LibraryURL: ObserveURL}
	before, err := runDirs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	add := func(r *Result) {
		rep.Stages = append(rep.Stages, r)
		if !r.Pass {
			rep.Failed++
		}
		if cfg.OnStage != nil {
			cfg.OnStage(len(rep.Stages), r)
		}
	}
	for _, st := range cfg.Stages {
		add(e.runStage(ctx, st))
	}
	if !cfg.SkipApproval {
		for _, r := range e.approvalStages(ctx) {
			add(r)
		}
	}
	if agent {
		for _, r := range e.mcpStages(ctx) {
			add(r)
		}
		add(e.codegenStage())
		add(e.healStage(ctx))
		if cfg.Bin != "" {
			add(e.fleetStage(ctx))
			add(e.takeoverStage(ctx))
			if cfg.Desktop != "" {
				add(e.desktopStage(ctx))
			}
		}
	}
	if cfg.Discoverer != nil {
		for _, r := range e.discoveryStages(ctx) {
			add(r)
		}
	}
	add(e.verifyStage(before))
	return rep, nil
}

// runStage prepares the app, replays the stage's capability in a fresh
// session and checks the result and the app's ledger and notice.
func (e *env) runStage(ctx context.Context, st Stage) *Result {
	r := &Result{Stage: st}
	if err := e.prepare(ctx, st); err != nil {
		return r.fail("%v", err)
	}
	rec, err := e.replay(ctx, st)
	if err != nil {
		return r.fail("%v", err)
	}
	r.Record, r.Pass = rec, true
	if p := checkRecord(st, rec); p != "" {
		r.fail("%s", p)
	}
	e.checkApp(ctx, r)
	if r.Pass {
		r.Detail = detail(rec)
		if kept := keptScreens(e.cfg.DataDir, rec.RunID); kept != "" {
			r.Detail += "; " + kept
		}
	}
	return r
}

// fail marks r failed with a problem, which is also its detail.
func (r *Result) fail(format string, args ...any) *Result {
	r.Pass, r.Problem = false, fmt.Sprintf(format, args...)
	r.Detail = r.Problem
	return r
}

// prepare resets the app and sets the stage's variant and fault.
func (e *env) prepare(ctx context.Context, st Stage) error {
	if err := e.app.Reset(ctx); err != nil {
		return fmt.Errorf("reset mock app: %w", err)
	}
	if st.Variant != "" {
		if err := e.app.SetVariant(ctx, st.Variant); err != nil {
			return fmt.Errorf("set variant: %w", err)
		}
	}
	if st.Fault != "" {
		if err := e.app.Arm(ctx, st.Fault, st.FaultCount, st.FaultAfter); err != nil {
			return fmt.Errorf("arm fault: %w", err)
		}
	}
	return nil
}

// replay runs the stage's capability once in a fresh browser session.
func (e *env) replay(ctx context.Context, st Stage) (*domain.RunRecord, error) {
	l, err := e.lib.Lookup(st.Capability)
	if err != nil {
		return nil, err
	}
	sess, err := e.br.NewSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	defer sess.Close()
	var approval *policy.Approval
	if st.Approve {
		// The demo plays the reviewer: it approves the exact content it runs.
		approval = &policy.Approval{Capability: l.Capability.Ref(), ContentHash: l.Hash, Approver: "demo reviewer"}
	}
	rec, err := replay.Run(ctx, replay.Options{
		Capability: l, Library: e.lib, Inputs: st.Inputs, BaseURL: e.base, Surface: sess,
		Secrets: demoSecrets(), Redactor: e.cfg.Redactor, DataDir: e.cfg.DataDir, RunID: e.cfg.RunID(),
		Logger: e.cfg.Logger, AllowIrreversible: st.Irrev, ReleasedGates: st.Gates, Approval: approval,
	})
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return rec, nil
}

// checkApp compares the app's ledger and, when asked, its notice with the
// stage's expectation. A read error replaces an earlier problem; a
// mismatch is reported only when nothing else was.
func (e *env) checkApp(ctx context.Context, r *Result) {
	ledger, err := e.app.Ledger(ctx)
	if err != nil {
		r.fail("read ledger: %v", err)
	} else if len(ledger) != r.WantLedger && r.Pass {
		r.fail("ledger has %d entries, want %d", len(ledger), r.WantLedger)
	}
	if !r.WantNoNotice {
		return
	}
	st, err := e.app.State(ctx)
	if err != nil {
		r.fail("read state: %v", err)
	} else if st.NoticeAcknowledged != 0 && r.Pass {
		r.fail("the undeclared dialog was clicked through (%d)", st.NoticeAcknowledged)
	}
}

func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "r" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
