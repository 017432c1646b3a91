package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/anthropic"
	"github.com/cuahq/cua/internal/model/cassette"
	modelexec "github.com/cuahq/cua/internal/model/exec"
	"github.com/cuahq/cua/internal/model/openai"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/report"
	"github.com/cuahq/cua/internal/secret"
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
	secrets *secret.Store
}

func newCmdDiscover(f *Factory, runF func(context.Context, *discoverOptions) error) *cobra.Command {
	opts := &discoverOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:     "discover",
		Short:   "Explore a workflow once with a model, compile it into a capability, and replay it",
		Long:    help("discover", false),
		Example: help("discover", true),
		Args:    exactArgs(0, "no arguments (use --goal)"),
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
	o.DataDir = dataDir(o.DataDir, o.Env)
	if o.secrets, err = secret.NewStore(o.Env, o.SecretsFile); err != nil {
		return err
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

func runDiscover(ctx context.Context, o *discoverOptions) error {
	red := redact.New()
	logger := newLogger(o.IO.ErrOut, red)
	m, err := o.newModel(red)
	if err != nil {
		return err
	}
	runID := pipeline.NewRunID()
	provenanceID := runID
	if o.Cassette != "" {
		if provenanceID, err = pipeline.CassetteProvenance(o.Cassette); err != nil {
			return err
		}
	}
	l := launch.New(launch.Options{Kind: domain.Surface(o.Surface), BaseURL: o.Target, Browser: o.Browser, Headful: o.Headful, Logger: logger})
	defer l.Close()
	progress := func(r agent.StepReport) {
		if o.JSON {
			return
		}
		line := fmt.Sprintf("step %2d  %-9s %-40s %-12s %5d tokens", r.Step, r.Action, report.Trim(r.Target, 40), r.Verdict, r.Tokens)
		if r.Notice != "" {
			line += "  (" + report.Trim(r.Notice, 80) + ")"
		}
		fmt.Fprintln(o.IO.ErrOut, red.String(line))
	}
	out, err := pipeline.Run(ctx, pipeline.Params{
		Agent: agent.Config{
			Model: m, Goal: o.Goal, BaseURL: o.Target, Secrets: o.secrets,
			SecretNames: o.secrets.Names(secret.Environ()), Redactor: red, DataDir: o.DataDir, RunID: runID,
			Autonomy: o.Autonomy, Sovereign: o.Sovereign, Grants: o.grants, Approver: o.approver(),
			Budget:   agent.Budget{MaxSteps: o.MaxSteps, MaxTokens: o.MaxTokens, MaxCost: o.MaxCost, Deadline: o.Deadline},
			KillFile: o.KillFile, Progress: progress, Frameless: o.Surface == "state", Logger: logger,
		},
		Open: l.Open, Out: o.Out, ID: o.ID, Version: o.Version, ProvenanceID: provenanceID,
		CompiledAt: o.compileTime(), LibraryDir: o.Library, Eval: !o.NoEval,
	})
	if err != nil {
		return err
	}
	var exit error
	if code := out.ExitCode(); code != 0 {
		exit = &ExitError{Code: code}
	}
	return o.report(out, exit)
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

func (o *discoverOptions) report(r *pipeline.Result, exit error) error {
	if o.JSON {
		if err := writeJSON(o.IO.Out, struct {
			SchemaVersion int `json:"schema_version"`
			*pipeline.Result
		}{JSONSchemaVersion, r}); err != nil {
			return err
		}
		return exit
	}
	report.Discovery(o.IO.Out, r)
	return exit
}
