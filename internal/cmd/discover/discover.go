package discovercmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/report"
	"github.com/cuahq/cua/internal/secret"
)

// discoverOptions binds the flags straight into the run they configure.
type discoverOptions struct {
	IO  *cmdutil.IOStreams
	Env func(string) string

	Agent                                  agent.Config    // --goal, --target, --autonomy, budgets, --data-dir
	Params                                 pipeline.Params // --out, --id, --version, --library
	Launch                                 launch.Options  // --browser, --headful, --display
	LaunchCommand                          string          // --launch, split on spaces into Launch.Desktop.Command
	Model                                  string
	LLMBase                                string
	Record, Cassette, SecretsFile, Surface string
	Grants                                 []string
	JSON, NoEval                           bool
}

func NewCmdDiscover(f *cmdutil.Factory, runF func(context.Context, *discoverOptions) error) *cobra.Command {
	opts := &discoverOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:     "discover",
		Short:   "Explore a workflow once with a model, compile it into a capability, and replay it",
		Long:    cmdutil.Help(helpDiscover, false),
		Example: cmdutil.Help(helpDiscover, true),
		Args:    cmdutil.ExactArgs(0, "no arguments (use --goal)"),
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
	a, b, p, fl := &opts.Agent, &opts.Agent.Budget, &opts.Params, cmd.Flags()
	fl.StringVar(&a.Goal, "goal", "", "what to do, in words (required)")
	fl.StringVar(&a.BaseURL, "target", "", "base URL of the application (required)")
	fl.StringVar(&p.Out, "out", "", "directory to write the compiled capability to (required)")
	fl.StringVar(&opts.Model, "model", "openai", "openai[:ID], anthropic[:ID] or exec:COMMAND")
	fl.StringVar(&opts.LLMBase, "llm-base-url", "", "OpenAI-compatible API base URL (default $CUA_LLM_BASE_URL)")
	fl.StringVar(&opts.Record, "record", "", "record every exchange with the model to FILE")
	fl.StringVar(&opts.Cassette, "cassette", "", "replay a recorded exploration from FILE (no network, no key)")
	fl.IntVar(&a.Autonomy, "autonomy", agent.LevelAuto, "autonomy level 0-3")
	fl.BoolVar(&a.Sovereign, "sovereign", false, "delegate irreversible actions for this run (needs --deadline and --max-tokens)")
	fl.IntVar(&b.MaxSteps, "max-steps", defaultDiscoverySteps, "stop after this many steps")
	fl.IntVar(&b.MaxTokens, "max-tokens", 0, "stop after this many tokens (0: no bound)")
	fl.Float64Var(&b.MaxCost, "max-cost", 0, "stop after this many dollars (priced models only)")
	fl.DurationVar(&b.Deadline, "deadline", 10*time.Minute, "stop after this long")
	fl.StringVar(&a.KillFile, "kill-file", "", "stop as soon as this file exists")
	fl.StringArrayVar(&opts.Grants, "grant", nil, "allow N irreversible actions on controls whose name contains MATCH: MATCH:N (repeatable)")
	fl.StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values (mode 0600); CUA_SECRET_<REF> works too")
	fl.StringVar(&opts.Surface, "surface", "web", "web (Chromium), state (the application's HTTP automation contract) or desktop (AT-SPI, with --launch)")
	fl.StringVar(&opts.LaunchCommand, "launch", "", `desktop: the command that starts the application, "{url}" replaced by the document`)
	fl.StringVar(&opts.Launch.Desktop.Display, "display", "", "desktop: the X display to act on (default: a private Xvfb and session bus)")
	fl.StringVar(&opts.Launch.Browser, "browser", "", "Chromium executable")
	fl.BoolVar(&opts.Launch.Headful, "headful", false, "show the browser window")
	cmdutil.DataDirFlag(cmd, &a.DataDir)
	fl.StringVar(&p.ID, "id", "", "id of the compiled capability (default derived from the goal)")
	fl.StringVar(&p.Version, "version", "", "version of the compiled capability (default 0.1.0)")
	fl.StringVar(&p.LibraryDir, "library", "", "directory of capabilities the eval replay may call")
	fl.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	fl.BoolVar(&opts.NoEval, "no-eval", false, "skip the eval replay")
	return cmd
}

// defaultDiscoverySteps is --max-steps' default. The budget is part of what
// the model is told, so a cassette recorded with it replays only with it.
const defaultDiscoverySteps = 40

func (o *discoverOptions) validate() error {
	a, b := &o.Agent, o.Agent.Budget
	switch {
	case strings.TrimSpace(a.Goal) == "":
		return cmdutil.FlagErrorf("--goal is required")
	case a.BaseURL == "":
		return cmdutil.FlagErrorf("--target is required")
	case o.Params.Out == "":
		return cmdutil.FlagErrorf("--out is required")
	case o.Record != "" && o.Cassette != "":
		return cmdutil.FlagErrorf("--record and --cassette cannot be combined")
	case a.Autonomy < 0 || a.Autonomy > 3:
		return cmdutil.FlagErrorf("--autonomy %d: want 0-3", a.Autonomy)
	case b.MaxSteps <= 0:
		return cmdutil.FlagErrorf("--max-steps must be positive")
	case b.MaxTokens < 0 || b.MaxCost < 0 || b.Deadline < 0:
		return cmdutil.FlagErrorf("budgets cannot be negative")
	case a.Sovereign && (b.Deadline <= 0 || b.MaxTokens <= 0):
		// No model is priced here, so a cost budget could not bind.
		return cmdutil.FlagErrorf("--sovereign needs --deadline and --max-tokens")
	case o.Surface != "web" && o.Surface != "state" && o.Surface != "desktop":
		return cmdutil.FlagErrorf("--surface %q: want web, state or desktop", o.Surface)
	}
	if err := o.validateDesktop(); err != nil {
		return err
	}
	if err := cmdutil.HTTPURL("--target", a.BaseURL); err != nil {
		return err
	}
	for _, s := range o.Grants {
		g, err := policy.ParseGrant(s)
		if err != nil {
			return cmdutil.FlagErrorf("--grant: %v", err)
		}
		a.Grants = append(a.Grants, g)
	}
	if _, err := os.Stat(o.Cassette); o.Cassette != "" && err != nil {
		return fmt.Errorf("--cassette: %w", err)
	}
	a.DataDir = launch.DataDir(a.DataDir, o.Env)
	store, err := secret.NewStore(o.Env, o.SecretsFile)
	if err != nil {
		return err
	}
	a.Secrets, a.SecretNames = store, store.Names(secret.Environ())
	if o.Cassette == "" { // a missing key is reported before a browser starts
		_, err = o.newModel(redact.New())
	}
	return err
}

// newModel builds the model the flags name.
func (o *discoverOptions) newModel(red *redact.Redactor) (model.Model, error) {
	m, err := launch.Model(launch.ModelSpec{Spec: o.Model, Getenv: o.Env, LLMBase: o.LLMBase,
		Cassette: o.Cassette, Record: o.Record, Redact: red.String})
	if errors.Is(err, launch.ErrModelSpec) {
		return nil, cmdutil.FlagErrorf("--model: %v", err)
	}
	return m, err
}

func runDiscover(ctx context.Context, o *discoverOptions) error {
	red := redact.New()
	a, p := o.Agent, o.Params
	a.Redactor, a.Logger, a.RunID, a.Frameless = red, cmdutil.NewLogger(o.IO.ErrOut, red), pipeline.NewRunID(), o.Surface == "state"
	a.Kind = domain.Surface(o.Surface)
	a.Approver, a.Progress = agent.TerminalApprover(o.IO.In, o.IO.ErrOut), o.progress(red)
	var err error
	if a.Model, err = o.newModel(red); err != nil {
		return err
	}
	p.ProvenanceID, p.CompiledAt, p.Eval = a.RunID, time.Now, !o.NoEval
	if o.Cassette != "" { // a replayed exploration is reproducible
		if p.ProvenanceID, err = pipeline.CassetteProvenance(o.Cassette); err != nil {
			return err
		}
		p.CompiledAt = nil
	}
	lo := o.Launch
	lo.Kind, lo.BaseURL, lo.Logger = domain.Surface(o.Surface), a.BaseURL, a.Logger
	l := launch.New(lo)
	defer l.Close()
	p.Agent, p.Open = a, l.Open
	p.BeforeEval = func(l *capability.Loaded) {
		if w := report.EvalWarning(l.Capability, a.BaseURL); w != "" {
			fmt.Fprintln(o.IO.ErrOut, w)
		}
	}
	out, err := pipeline.Run(ctx, p)
	if err != nil {
		return err
	}
	if o.JSON {
		err = cmdutil.WriteJSON(o.IO.Out, struct {
			SchemaVersion int `json:"schema_version"`
			*pipeline.Result
		}{cmdutil.JSONSchemaVersion, out})
	} else {
		report.Discovery(o.IO.Out, out)
	}
	if code := out.ExitCode(); err == nil && code != 0 {
		return &cmdutil.ExitError{Code: code}
	}
	return err
}

// progress prints each step on stderr, redacted, unless --json.
func (o *discoverOptions) progress(red *redact.Redactor) func(agent.StepReport) {
	if o.JSON {
		return nil
	}
	return func(r agent.StepReport) { fmt.Fprintln(o.IO.ErrOut, red.String(report.Step(r))) }
}
