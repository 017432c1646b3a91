package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/anthropic"
	"github.com/cuahq/cua/internal/model/cassette"
	modelexec "github.com/cuahq/cua/internal/model/exec"
	"github.com/cuahq/cua/internal/model/openai"
	"github.com/cuahq/cua/internal/recorder"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/browser"
	"github.com/cuahq/cua/internal/surface/state"
)

type discoverOptions struct {
	IO  *IOStreams
	Env func(string) string

	Goal        string
	Target      string
	Out         string
	Model       string
	BaseURL     string
	Record      string
	Cassette    string
	Autonomy    int
	Sovereign   bool
	MaxSteps    int
	MaxTokens   int
	MaxCost     float64
	Deadline    time.Duration
	KillFile    string
	Grants      []string
	SecretsFile string
	Surface     string
	Browser     string
	Headful     bool
	DataDir     string
	ID          string
	Version     string
	Library     string
	JSON        bool
	NoEval      bool

	grants  []agent.Grant
	secrets *secretStore
}

func newCmdDiscover(f *Factory, runF func(context.Context, *discoverOptions) error) *cobra.Command {
	opts := &discoverOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "Explore a workflow once with a model, compile it into a capability, and replay it",
		Long: heredoc.Doc(`
			The one run in which a model may be uncertain. The model sees a numbered,
			redacted element list of the application and answers one action at a time
			through a closed contract; every action goes through the same targeting,
			policy chokepoint and dispatcher that replay uses, is verified by
			independent witnesses, and is bounded by budgets, a stuck guard and the
			autonomy level. The trace is compiled into a capability, sealed, written to
			--out, and replayed immediately on the same application (the eval run).

			Models: openai[:ID] (CUA_LLM_API_KEY or OPENAI_API_KEY; CUA_LLM_BASE_URL,
			CUA_LLM_MODEL), anthropic[:ID] (ANTHROPIC_API_KEY), exec:COMMAND (a program
			reading a request as JSON on stdin and writing a turn on stdout).
			--record FILE saves every (redacted) exchange; --cassette FILE replays them
			with no network and no key.

			Autonomy: 0 advisory (propose only), 1 confirm each action, 2 confirm
			risky actions, 3 act except irreversible actions without an approval or a
			--grant. --sovereign delegates irreversible actions for this run and needs
			--deadline and --max-tokens.
		`),
		Example: heredoc.Doc(`
			$ cua discover --goal "Look up the savings balance of member 12345" \
			    --target http://127.0.0.1:8811 --out caps/ --cassette examples/cassettes/savings_balance.json
			$ cua discover --goal "..." --target http://127.0.0.1:8811 --out caps/ --model openai:gpt-4.1-mini --record run.json
		`),
		Args: exactArgs(0, "no arguments (use --goal)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDiscover(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Goal, "goal", "", "what to do, in words (required)")
	fl.StringVar(&opts.Target, "target", "", "base URL of the application (required)")
	fl.StringVar(&opts.Out, "out", "", "directory to write the compiled capability to (required)")
	fl.StringVar(&opts.Model, "model", "openai", "openai[:ID], anthropic[:ID] or exec:COMMAND")
	fl.StringVar(&opts.BaseURL, "llm-base-url", "", "OpenAI-compatible API base URL (default $CUA_LLM_BASE_URL)")
	fl.StringVar(&opts.Record, "record", "", "record every exchange with the model to FILE")
	fl.StringVar(&opts.Cassette, "cassette", "", "replay a recorded exploration from FILE (no network, no key)")
	fl.IntVar(&opts.Autonomy, "autonomy", agent.LevelAuto, "autonomy level 0-3")
	fl.BoolVar(&opts.Sovereign, "sovereign", false, "delegate irreversible actions for this run (needs --deadline and --max-tokens)")
	fl.IntVar(&opts.MaxSteps, "max-steps", defaultDiscoverySteps, "stop after this many steps")
	fl.IntVar(&opts.MaxTokens, "max-tokens", 0, "stop after this many tokens (0: no bound)")
	fl.Float64Var(&opts.MaxCost, "max-cost", 0, "stop after this many dollars (priced models only)")
	fl.DurationVar(&opts.Deadline, "deadline", 10*time.Minute, "stop after this long")
	fl.StringVar(&opts.KillFile, "kill-file", "", "stop as soon as this file exists")
	fl.StringArrayVar(&opts.Grants, "grant", nil, "allow N irreversible actions on controls whose name contains MATCH: MATCH:N (repeatable)")
	fl.StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values (mode 0600); CUA_SECRET_<REF> works too")
	fl.StringVar(&opts.Surface, "surface", "web", "web (Chromium) or state (the application's HTTP automation contract)")
	fl.StringVar(&opts.Browser, "browser", "", "Chromium executable")
	fl.BoolVar(&opts.Headful, "headful", false, "show the browser window")
	fl.StringVar(&opts.DataDir, "data-dir", "", "data directory (default $CUA_DATA_DIR or .cua)")
	fl.StringVar(&opts.ID, "id", "", "id of the compiled capability (default derived from the goal)")
	fl.StringVar(&opts.Version, "version", "", "version of the compiled capability (default 0.1.0)")
	fl.StringVar(&opts.Library, "library", "", "directory of capabilities the eval replay may call")
	fl.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	fl.BoolVar(&opts.NoEval, "no-eval", false, "skip the eval replay")
	return cmd
}

// defaultDiscoverySteps is --max-steps' default. The budget is part of what
// the model is told, so a cassette recorded with it replays only with it.
const defaultDiscoverySteps = 40

var grantRE = regexp.MustCompile(`^(.+):([0-9]+)$`)

func (o *discoverOptions) validate() error {
	switch {
	case strings.TrimSpace(o.Goal) == "":
		return flagErrorf("--goal is required")
	case o.Target == "":
		return flagErrorf("--target is required")
	case o.Out == "":
		return flagErrorf("--out is required")
	case o.Record != "" && o.Cassette != "":
		return flagErrorf("--record and --cassette cannot be combined")
	case o.Autonomy < 0 || o.Autonomy > 3:
		return flagErrorf("--autonomy %d: want 0-3", o.Autonomy)
	case o.MaxSteps <= 0:
		return flagErrorf("--max-steps must be positive")
	case o.MaxTokens < 0 || o.MaxCost < 0 || o.Deadline < 0:
		return flagErrorf("budgets cannot be negative")
	case o.Sovereign && (o.Deadline <= 0 || o.MaxTokens <= 0):
		// No model is priced here, so a cost budget could not bind.
		return flagErrorf("--sovereign needs --deadline and --max-tokens")
	case o.Surface != "web" && o.Surface != "state":
		return flagErrorf("--surface %q: want web or state", o.Surface)
	}
	u, err := url.Parse(o.Target)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return flagErrorf("--target %q: want an http(s) URL", o.Target)
	}
	for _, g := range o.Grants {
		m := grantRE.FindStringSubmatch(g)
		if m == nil {
			return flagErrorf("--grant %q: want MATCH:N", g)
		}
		n, _ := strconv.Atoi(m[2])
		o.grants = append(o.grants, agent.Grant{Match: m[1], Uses: n})
	}
	if o.Cassette != "" {
		if _, err := os.Stat(o.Cassette); err != nil {
			return fmt.Errorf("--cassette: %w", err)
		}
	}
	if o.DataDir == "" {
		o.DataDir = o.Env("CUA_DATA_DIR")
	}
	if o.DataDir == "" {
		o.DataDir = ".cua"
	}
	o.secrets = &secretStore{getenv: o.Env}
	if o.SecretsFile != "" {
		m, err := loadSecretsFile(o.SecretsFile)
		if err != nil {
			return err
		}
		o.secrets.file = m
	}
	// The model is built here too, so a missing key is reported before a
	// browser starts.
	if o.Cassette == "" {
		if _, err := o.newModel(redact.New()); err != nil {
			return err
		}
	}
	return nil
}

// newModel builds the model the flags name.
func (o *discoverOptions) newModel(red *redact.Redactor) (model.Model, error) {
	if o.Cassette != "" {
		return cassette.Open(o.Cassette, cassette.WithRedact(red.String))
	}
	kind, id, _ := strings.Cut(o.Model, ":")
	var m model.Model
	switch kind {
	case "openai":
		cfg, err := openai.FromEnv(o.Env, id, o.BaseURL)
		if err != nil {
			return nil, err
		}
		om, err := openai.New(cfg)
		if err != nil {
			return nil, err
		}
		m = om
	case "anthropic":
		cfg, err := anthropic.FromEnv(o.Env, id, "")
		if err != nil {
			return nil, err
		}
		am, err := anthropic.New(cfg)
		if err != nil {
			return nil, err
		}
		m = am
	case "exec":
		if id == "" {
			return nil, flagErrorf("--model exec:COMMAND: no command")
		}
		fields := strings.Fields(id)
		m = modelexec.New(fields[0], fields[1:]...)
	default:
		return nil, flagErrorf("--model %q: want openai[:ID], anthropic[:ID] or exec:COMMAND", o.Model)
	}
	if o.Record != "" {
		return cassette.Record(m, o.Record, red.String), nil
	}
	return m, nil
}

// secretNames lists the secret refs the model may type: those set in the
// environment (CUA_SECRET_<REF>) and in the secrets file. Values never leave
// the secret store.
func (o *discoverOptions) secretNames(environ []string) []string {
	set := map[string]bool{}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if ref, ok := strings.CutPrefix(k, "CUA_SECRET_"); ok && ref != "" {
			set[strings.ToLower(ref)] = true
		}
	}
	for k := range o.secrets.file {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// discoverResult is what cua discover reports.
type discoverResult struct {
	SchemaVersion int               `json:"schema_version"`
	Discovery     *agent.Result     `json:"discovery"`
	File          string            `json:"file,omitempty"`
	Capability    string            `json:"capability,omitempty"`
	ContentHash   string            `json:"content_hash,omitempty"`
	ReviewNotes   []string          `json:"review_notes,omitempty"`
	Eval          *domain.RunRecord `json:"eval,omitempty"`
	EvalInputs    map[string]string `json:"eval_inputs,omitempty"`
}

func runDiscover(ctx context.Context, o *discoverOptions) error {
	red := redact.New()
	logger := slog.New(redact.NewHandler(slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}), red))
	m, err := o.newModel(red)
	if err != nil {
		return err
	}
	runID := newRunID()
	provenanceID := runID
	if o.Cassette != "" {
		// A replayed exploration is reproducible: the capability names the
		// cassette (by content) instead of this run, and carries no compile
		// time. The evidence still goes to this run's own directory.
		raw, err := os.ReadFile(o.Cassette)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		provenanceID = "cassette-" + hex.EncodeToString(sum[:6])
	}
	var br *browser.Browser
	openSurface := func() (surface.Surface, error) {
		if o.Surface == "state" {
			return openStateSession(ctx, o.Target)
		}
		if br == nil {
			b, err := browser.Launch(ctx, browser.Options{ExecPath: o.Browser, Headful: o.Headful, Logger: logger})
			if err != nil {
				return nil, fmt.Errorf("start browser: %w", err)
			}
			br = b
		}
		return br.NewSession(ctx)
	}
	defer func() {
		if br != nil {
			br.Close()
		}
	}()
	progress := func(r agent.StepReport) {
		if o.JSON {
			return
		}
		line := fmt.Sprintf("step %2d  %-9s %-40s %-12s %5d tokens", r.Step, r.Action, trim(r.Target, 40), r.Verdict, r.Tokens)
		if r.Notice != "" {
			line += "  (" + trim(r.Notice, 80) + ")"
		}
		fmt.Fprintln(o.IO.ErrOut, red.String(line))
	}
	out, err := discoverCompileEval(ctx, discoverParams{
		Agent: agent.Config{
			Model: m, Goal: o.Goal, BaseURL: o.Target, Secrets: o.secrets,
			SecretNames: o.secretNames(secretEnviron()), Redactor: red, DataDir: o.DataDir, RunID: runID,
			Autonomy: o.Autonomy, Sovereign: o.Sovereign, Grants: o.grants, Approver: o.approver(),
			Budget:   agent.Budget{MaxSteps: o.MaxSteps, MaxTokens: o.MaxTokens, MaxCost: o.MaxCost, Deadline: o.Deadline},
			KillFile: o.KillFile, Progress: progress, Frameless: o.Surface == "state", Logger: logger,
		},
		Open: openSurface, Out: o.Out, ID: o.ID, Version: o.Version, ProvenanceID: provenanceID,
		CompiledAt: o.compileTime(), LibraryDir: o.Library, Eval: !o.NoEval,
	})
	if err != nil {
		return err
	}
	var exit error
	switch {
	case out.File == "":
		exit = &ExitError{Code: 2}
	case out.Eval != nil && out.Eval.ExitCode != 0:
		exit = &ExitError{Code: out.Eval.ExitCode}
	}
	return o.report(out, exit)
}

// discoverParams is one discovery, compile and eval run.
type discoverParams struct {
	// Agent is the discovery configuration without its Surface.
	Agent        agent.Config
	Open         func() (surface.Surface, error)
	Out          string
	ID, Version  string
	ProvenanceID string
	CompiledAt   func() time.Time
	LibraryDir   string
	Eval         bool
}

// discoverCompileEval explores once, compiles and seals the trace into
// Out, and replays the result on the same application. A discovery that did
// not finish returns a result without File.
func discoverCompileEval(ctx context.Context, p discoverParams) (*discoverResult, error) {
	sess, err := p.Open()
	if err != nil {
		return nil, err
	}
	cfg := p.Agent
	cfg.Surface = sess
	res, err := agent.Run(ctx, cfg)
	sess.Close()
	if err != nil {
		return nil, err
	}
	out := &discoverResult{SchemaVersion: JSONSchemaVersion, Discovery: res}
	if res.Status != agent.StatusFinished && res.Status != agent.StatusOutcome {
		return out, nil
	}
	res.Trace.RunID = p.ProvenanceID
	comp, err := recorder.Compile(res.Trace, recorder.Options{ID: p.ID, Version: p.Version, Now: p.CompiledAt})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	text, err := recorder.Marshal(comp.Capability, comp.Notes)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := os.MkdirAll(p.Out, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	file := filepath.Join(p.Out, comp.Capability.ID+"@"+comp.Capability.Version+".yaml")
	if err := capability.WriteFileAtomic(file, text); err != nil {
		return nil, fmt.Errorf("write capability: %w", err)
	}
	hash, err := capability.Seal(file)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	out.File, out.Capability, out.ContentHash, out.ReviewNotes = file, comp.Capability.Ref(), hash, comp.Notes
	if !p.Eval {
		return out, nil
	}
	loaded, err := capability.Load(file)
	if err != nil {
		return nil, err
	}
	inputs := map[string]string{}
	for literal, name := range res.Trace.Inputs {
		inputs[name] = literal
	}
	out.EvalInputs = inputs
	dir := p.LibraryDir
	if dir == "" {
		dir = p.Out
	}
	lib, err := replay.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	lib.Add(loaded)
	evalSess, err := p.Open()
	if err != nil {
		return nil, err
	}
	defer evalSess.Close()
	rec, err := replay.Run(ctx, replay.Options{Capability: loaded, Library: lib, Inputs: inputs, BaseURL: cfg.BaseURL,
		Surface: evalSess, Secrets: cfg.Secrets, Redactor: cfg.Redactor, DataDir: cfg.DataDir, RunID: newRunID(), Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	redactMessages(rec, cfg.Redactor)
	out.Eval = rec
	return out, nil
}

func (o *discoverOptions) compileTime() func() time.Time {
	if o.Cassette != "" {
		return nil
	}
	return time.Now
}

// approver asks on the terminal when one is attached, else nothing (the
// autonomy level then holds actions that need an approval).
func (o *discoverOptions) approver() agent.Approver {
	if fi, err := os.Stdin.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 || o.IO.In == nil {
		return nil
	}
	return &promptApprover{in: o.IO.In, out: o.IO.ErrOut}
}

type promptApprover struct {
	in  io.Reader
	out io.Writer
}

func (p *promptApprover) Approve(_ context.Context, pr agent.Proposal) (bool, error) {
	fmt.Fprintf(p.out, "approve step %d: %s? [y/N] ", pr.Step, pr)
	var answer string
	if _, err := fmt.Fscanln(p.in, &answer); err != nil {
		return false, nil
	}
	return strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes"), nil
}

func (o *discoverOptions) report(r *discoverResult, exit error) error {
	if o.JSON {
		if err := writeJSON(o.IO.Out, r); err != nil {
			return err
		}
		return exit
	}
	d := r.Discovery
	fmt.Fprintf(o.IO.Out, "discovery  %s after %d steps, %d tokens", d.Status, d.Steps, d.Tokens)
	if d.Priced {
		fmt.Fprintf(o.IO.Out, ", $%.4f", d.Cost)
	}
	fmt.Fprintln(o.IO.Out)
	if d.Reason != "" {
		fmt.Fprintf(o.IO.Out, "  reason     %s\n", d.Reason)
	}
	if r.File != "" {
		fmt.Fprintf(o.IO.Out, "compiled   %s  %s\n  sealed     %s\n", r.Capability, r.File, r.ContentHash)
		for _, n := range r.ReviewNotes {
			fmt.Fprintf(o.IO.Out, "  review     %s\n", n)
		}
	}
	if r.Eval != nil {
		fmt.Fprintf(o.IO.Out, "eval run   ")
		printSummary(o.IO.Out, r.Eval)
	}
	return exit
}

func trim(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// openStateSession opens the state-contract surface on a fresh automation
// session when the application offers one (its equivalent of a new browser
// context).
// openStateSession opens a session on a state-contract app. allowed are the
// capability's allowed_domains: an origin entry as it is, a bare host on the
// base URL's scheme and port; none means the base URL's origin only.
func openStateSession(ctx context.Context, base string, allowed ...string) (*state.Surface, error) {
	var origins []string
	if u, err := url.Parse(base); err == nil && len(allowed) > 0 {
		for _, d := range allowed {
			if strings.Contains(d, "://") {
				origins = append(origins, d)
				continue
			}
			port := u.Port()
			if port == "" {
				port = map[string]string{"https": "443"}[u.Scheme]
				if port == "" {
					port = "80"
				}
			}
			origins = append(origins, u.Scheme+"://"+d+":"+port)
		}
	}
	s, err := state.New(base, nil, state.WithAllowedOrigins(origins...))
	if err != nil {
		return nil, err
	}
	if err := s.StartSession(ctx); err != nil && !errors.Is(err, surface.ErrUnsupported) {
		s.Close()
		return nil, err
	}
	return s, nil
}
