package replaycmd

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmd/console"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/heal"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/report"
	"github.com/cuahq/cua/internal/secret"
	"github.com/cuahq/cua/internal/store"
)

// replayOptions binds the flags straight into the run they configure.
type replayOptions struct {
	IO  *cmdutil.IOStreams
	Env func(string) string

	File                      string
	Run                       replay.Options // --base-url, --allow-irreversible, --release-gate, --data-dir
	Launch                    launch.Options // --browser, --cdp-url, --headful, --display, --launch
	LaunchCommand             string         // --launch, split on spaces into Launch.Desktop.Command
	LibraryDir                string
	JSON                      bool
	Inputs                    []string
	ApprovalFile, SecretsFile string
	Store                     launch.StoreOptions  // --db
	Gate                      catalog.RunParams    // --unattended, --eval, --idempotency-key
	Park                      bool                 // --park: park a NEEDS_HUMAN escalation in a console
	ParkConsole               consolecmd.ParkFlags // --console, --allow-remote, --tls-cert, --tls-key
	Engine                    string               // --engine: a running cua serve runs it (engine.go)
	lib                       replay.Library       // the catalog, for a capability resolved from it
	cat                       *catalog.Catalog     // set when the run is indexed
	st                        store.Store
	heal                      *heal.Service // proposals and the active version (heal.go)
	active                    bool          // the run was asked for as ID@active
}

func NewCmdReplay(f *cmdutil.Factory, runF func(context.Context, *replayOptions) error) *cobra.Command {
	opts := &replayOptions{IO: f.IO, Env: f.Getenv, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{
		Use:     "replay FILE|ID[@VERSION|@active]",
		Short:   "Replay a sealed capability in Chromium, with no model in the loop",
		Long:    cmdutil.Help(helpReplay, false),
		Example: cmdutil.Help(helpReplay, true),
		Args:    cmdutil.ExactArgs(1, "one capability FILE or catalog ID[@VERSION]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if opts.Engine != "" {
				return runEngine(cmd.Context(), opts, cmd.Flags(), f.PrincipalToken)
			}
			if err := opts.validate(cmd.Context()); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runReplay(cmd.Context(), opts)
		},
	}
	r, fl := &opts.Run, cmd.Flags()
	fl.StringArrayVarP(&opts.Inputs, "input", "i", nil, "input as NAME=VALUE (repeatable)")
	fl.StringVar(&r.BaseURL, "base-url", "http://127.0.0.1:8811", "base URL of the application")
	fl.BoolVar(&r.AllowIrreversible, "allow-irreversible", false, "allow irreversible actions (an approval of this exact content is also required)")
	fl.StringVar(&opts.ApprovalFile, "approval", "", "approval record (JSON) for irreversible actions")
	fl.StringArrayVar(&r.ReleasedGates, "release-gate", nil, "release the gate before step ID (repeatable)")
	fl.Var(&r.EvidenceLevel, "evidence-level", "screenshots to keep: full (every step), decisive (the capability's default), none (read-only capabilities only)")
	fl.BoolVar(&opts.Launch.Headful, "headful", false, "show the browser window")
	fl.BoolVar(&opts.JSON, "json", false, "print the run record as JSON")
	cmdutil.DataDirFlag(cmd, &r.DataDir)
	fl.StringVar(&opts.Launch.Browser, "browser", "", "Chromium executable (default $CUA_BROWSER or /usr/bin/chromium)")
	fl.StringVar(&opts.Launch.CDPURL, "cdp-url", "", "attach to a running browser's DevTools endpoint instead of launching one")
	fl.StringVar(&opts.Launch.Desktop.Display, "display", "", "desktop capabilities: the X display to act on (default: a private Xvfb and session bus)")
	fl.StringVar(&opts.LaunchCommand, "launch", "", `desktop capabilities: the command that starts the application, "{url}" replaced by the document (default: attach to the running one)`)
	fl.StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values (mode 0600)")
	fl.StringVar(&opts.LibraryDir, "library", "", "directory of capabilities this one may call (default: its directory)")
	fl.BoolVar(&opts.Gate.Unattended, "unattended", false, "require a catalog approval covering the inputs (refused before the browser starts)")
	fl.BoolVar(&opts.Gate.Eval, "eval", false, "record the run as an eval replay (counted by catalog approve --from-eval)")
	fl.StringVar(&opts.Gate.IdempotencyKey, "idempotency-key", "", "a second run with this key returns the first run's record")
	cmdutil.StoreFlags(cmd, &opts.Store, false)
	fl.BoolVar(&opts.Park, "park", false, "park a NEEDS_HUMAN escalation for an operator (served by --console) instead of ending the run")
	fl.DurationVar(&r.ParkTimeout, "park-timeout", replay.DefaultParkTimeout, "how long a parked run waits for an operator before it ends NEEDS_HUMAN")
	opts.ParkConsole.Bind(cmd, "console")
	cmdutil.PublishEvidenceFlag(f, cmd)
	bindEngine(f, cmd, opts)
	return cmd
}

// validate checks every flag and loads every file before a browser starts.
func (o *replayOptions) validate(ctx context.Context) error {
	l, err := o.load(ctx)
	if err != nil {
		return err
	}
	if !l.Sealed {
		return fmt.Errorf("%s is a draft: seal it (cua capability seal) before replaying", o.File)
	}
	r := &o.Run
	r.Capability = l
	if _, err := l.Capability.EvidenceFor(r.EvidenceLevel); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	if r.Inputs, err = cmdutil.PairsFlag("--input", o.Inputs); err != nil {
		return err
	}
	if err := cmdutil.HTTPURL("--base-url", r.BaseURL); err != nil {
		return err
	}
	r.DataDir = launch.DataDir(r.DataDir, o.Env)
	if o.LibraryDir == "" {
		o.LibraryDir = filepath.Dir(o.File)
	}
	if o.ApprovalFile != "" {
		if r.Approval, err = pipeline.LoadApproval(o.ApprovalFile); err != nil {
			return fmt.Errorf("--approval %w", err)
		}
	}
	for _, g := range r.ReleasedGates {
		if st := l.Capability.Step(g); st == nil || !st.Gate {
			return cmdutil.FlagErrorf("--release-gate %q: no gated step with that id", g)
		}
	}
	if err := o.validatePark(); err != nil {
		return err
	}
	if err := o.validateDesktop(l.Capability.Surface); err != nil {
		return err
	}
	r.Secrets, err = secret.NewStore(o.Env, o.SecretsFile)
	return err
}

// validateDesktop checks --display and --launch, which only a desktop
// capability takes. With --display, the session bus is the caller's own
// (DBUS_SESSION_BUS_ADDRESS), the one that display's applications use.
func (o *replayOptions) validateDesktop(kind domain.Surface) error {
	d := &o.Launch.Desktop
	if kind != domain.SurfaceDesktop {
		switch {
		case d.Display != "":
			return cmdutil.FlagErrorf("--display: the capability's surface is %q, not desktop", kind)
		case o.LaunchCommand != "":
			return cmdutil.FlagErrorf("--launch: the capability's surface is %q, not desktop", kind)
		}
		return nil
	}
	if o.LaunchCommand != "" {
		d.Command = strings.Fields(o.LaunchCommand)
		if len(d.Command) == 0 {
			return cmdutil.FlagErrorf("--launch: empty command")
		}
	}
	if d.Display != "" {
		if !strings.HasPrefix(d.Display, ":") {
			return cmdutil.FlagErrorf("--display %q: want an X display such as :1", d.Display)
		}
		if d.SessionBus = o.Env("DBUS_SESSION_BUS_ADDRESS"); d.SessionBus == "" {
			return cmdutil.FlagErrorf("--display %s: DBUS_SESSION_BUS_ADDRESS is unset (the display's session bus, where its applications register with AT-SPI)", d.Display)
		}
	}
	return nil
}

// validatePark checks the --park flags; a parked run's intervention queue
// lives in the store.
func (o *replayOptions) validatePark() error {
	if !o.Park {
		return nil
	}
	if o.Run.ParkTimeout <= 0 {
		return cmdutil.FlagErrorf("--park-timeout %s: must be positive", o.Run.ParkTimeout)
	}
	return o.ParkConsole.Validate()
}

// load loads the capability file, or resolves a reference from the
// catalog; the store opens when the run is indexed.
func (o *replayOptions) load(ctx context.Context) (l *capability.Loaded, err error) {
	if catalog.IsFile(o.File) && o.Gate == (catalog.RunParams{}) && o.Store.DB == "" {
		return capability.LoadContext(ctx, o.File)
	}
	o.Store.DataDir = o.Run.DataDir
	if o.cat, o.st, err = cmdutil.OpenCatalog(ctx, o.Store); err != nil {
		return nil, err
	}
	if catalog.IsFile(o.File) {
		return capability.LoadContext(ctx, o.File)
	}
	o.lib, o.LibraryDir = o.cat.Library(ctx), "-"
	ref, err := o.resolveActive(ctx, o.File)
	if err != nil {
		return nil, err
	}
	l, _, err = o.cat.Resolve(ctx, ref)
	return l, err
}

func runReplay(ctx context.Context, o *replayOptions) error {
	p := pipeline.ReplayParams{LibraryDir: o.LibraryDir, Library: o.lib}
	if o.st != nil {
		defer o.st.Close()
		p.Gate = o.cat.Gate(o.Gate)
		if o.heal != nil {
			o.Run.Proposer = o.heal
		}
	}
	red := redact.New()
	r, lo, c := o.Run, o.Launch, o.Run.Capability.Capability
	r.Redactor, r.Logger, r.RunID = red, cmdutil.NewLogger(o.IO.ErrOut, red), pipeline.NewRunID()
	lo.Kind, lo.BaseURL, lo.AllowedDomains, lo.Logger = c.Surface, r.BaseURL, c.Policy.AllowedDomains, r.Logger
	l := launch.New(lo)
	defer l.Close()
	if o.Park {
		st := o.st
		if st == nil {
			var err error
			o.Store.DataDir = r.DataDir
			if _, st, err = cmdutil.OpenCatalog(ctx, o.Store); err != nil {
				return err
			}
			defer st.Close()
		}
		srv, err := consolecmd.StartForRun(ctx, o.IO, o.ParkConsole, st, red)
		if err != nil {
			return err
		}
		defer srv.Close()
		r.Park = srv
	}
	p.Open, p.Run = l.Open, r
	rec, err := pipeline.Replay(ctx, p)
	if err != nil {
		return err
	}
	if err := o.observeCanary(ctx, rec); err != nil {
		return err
	}
	return o.print(rec)
}

// print writes the run's record (text or --json) and exits with its code.
func (o *replayOptions) print(rec *domain.RunRecord) (err error) {
	if o.JSON {
		err = cmdutil.WriteJSON(o.IO.Out, rec)
	} else {
		report.Summary(o.IO.Out, rec)
	}
	if err == nil && rec.ExitCode != 0 {
		return &cmdutil.ExitError{Code: rec.ExitCode}
	}
	return err
}
