package observecmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/observer"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/secret"
)

// ExitRefused is the exit code of a refused exposure.
const ExitRefused = 2

type observeOptions struct {
	IO          *cmdutil.IOStreams
	Env         func(string) string
	Run         string
	All         bool
	DataDir     string
	SecretsFile string
	// Evidence is --evidence: the evidence store served (default
	// <data-dir>/runs).
	Evidence string
	Exposure observer.Exposure
	// Plan is the accepted exposure, set by validation.
	Plan observer.Plan
}

// NewCmdObserve is `cua observe [RUN] [--all]`.
func NewCmdObserve(f *cmdutil.Factory, runF func(context.Context, *observeOptions) error) *cobra.Command {
	opts := &observeOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:     "observe [RUN] [--all]",
		Short:   "Serve the run library (or one run) read-only in a browser",
		Long:    cmdutil.Help(helpObserve, false),
		Example: cmdutil.Help(helpObserve, true),
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := observer.ValidateExposure(opts.Exposure)
			if err != nil {
				fmt.Fprintln(opts.IO.ErrOut, "error:", err)
				return &cmdutil.ExitError{Code: ExitRefused}
			}
			opts.Plan = plan
			if len(args) == 1 {
				opts.Run = args[0]
			}
			if opts.Run != "" && opts.All {
				return cmdutil.FlagErrorf("give one RUN to serve it alone, or --all (the default) for the whole library, not both")
			}
			opts.All = opts.Run == ""
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runObserve(cmd.Context(), opts)
		},
	}
	cmdutil.DataDirFlag(cmd, &opts.DataDir)
	fl := cmd.Flags()
	fl.BoolVar(&opts.All, "all", false, "serve every run under <data-dir>/runs (the default without RUN)")
	fl.StringVar(&opts.Exposure.Addr, "addr", observer.DefaultAddr, "loopback host:port to listen on")
	fl.BoolVar(&opts.Exposure.Expose, "expose", false, "make the pages reachable beyond this machine through --public-url")
	fl.StringVar(&opts.Exposure.PublicURL, "public-url", "", "https origin your edge forwards to --addr (with --expose)")
	fl.BoolVar(&opts.Exposure.EdgeAuth, "edge-auth", false, "you secure --public-url at its edge (access proxy, tailnet, reverse proxy with auth)")
	fl.BoolVar(&opts.Exposure.Safe, "safe", false, "serve only runs that pass cua verify (share_ready)")
	fl.StringVar(&opts.Evidence, "evidence", "", "serve the runs of this "+cmdutil.EvidenceUsage)
	fl.StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values to look for and remove (mode 0600)")
	return cmd
}

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// runsDir says where the runs are and which one alone is served: RUN is a
// run id under the data dir, or a bundle directory.
func runsDir(o *observeOptions) (dir, only string, err error) {
	dir = filepath.Join(launch.DataDir(o.DataDir, o.Env), "runs")
	if o.All {
		return dir, "", nil
	}
	if fi, err := os.Stat(o.Run); err == nil && fi.IsDir() {
		abs, err := filepath.Abs(o.Run)
		if err != nil {
			return "", "", fmt.Errorf("RUN %q: %w", o.Run, err)
		}
		if base := filepath.Base(abs); runIDPattern.MatchString(base) {
			return filepath.Dir(abs), base, nil
		}
	}
	if !runIDPattern.MatchString(o.Run) {
		return "", "", cmdutil.FlagErrorf("RUN %q: not a run id and not a bundle directory", o.Run)
	}
	if fi, err := os.Stat(filepath.Join(dir, o.Run)); err != nil || !fi.IsDir() {
		return "", "", cmdutil.FlagErrorf("RUN %q: no such run under %s", o.Run, dir)
	}
	return dir, o.Run, nil
}

func runObserve(ctx context.Context, o *observeOptions) error {
	dir, only, err := "", "", error(nil)
	if o.Evidence != "" {
		var stop func()
		dir, only, stop, err = storeDir(ctx, o)
		if err != nil {
			return err
		}
		defer stop()
	} else if dir, only, err = runsDir(o); err != nil {
		return err
	}
	file, err := secret.NewStore(func(string) string { return "" }, o.SecretsFile)
	if err != nil {
		return err
	}
	canaries := append(secret.EnvValues(), file.Values()...)
	red := redact.New(redact.WithLiterals(canaries...))
	logger := cmdutil.NewLogger(o.IO.ErrOut, red)
	lo := observer.LibraryOptions{RunsDir: dir, Only: only, Safe: o.Plan.Safe, Canaries: canaries, Redactor: red}
	if o.Evidence != "" {
		// The deployment key is the data directory's, not the store's.
		lo.DataDir = launch.DataDir(o.DataDir, o.Env)
	}
	lib, err := observer.NewLibrary(lo)
	if err != nil {
		return err
	}
	srv, err := observer.NewServer(observer.ServerOptions{Plan: o.Plan, Library: lib, Logger: logger})
	if err != nil {
		return err
	}
	if err := srv.Open(); err != nil {
		return err
	}
	defer srv.Close()
	printBanner(o, srv.URL(), only)
	logger.InfoContext(ctx, "observer serving", slog.String("mode", string(o.Plan.Mode)), slog.Bool("safe", o.Plan.Safe))
	<-ctx.Done()
	if err := srv.Close(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("observe: stop: %w", err)
	}
	return nil
}

func printBanner(o *observeOptions, url, only string) {
	what := "Run library"
	if only != "" {
		what, url = "Run "+only, url+"/runs/"+only
	}
	fmt.Fprintf(o.IO.Out, "%s (mode %s%s) at %s\n", what, o.Plan.Mode, map[bool]string{true: ", share_ready runs only"}[o.Plan.Safe], url)
	if o.Plan.Origin != "" {
		fmt.Fprintf(o.IO.Out, "public origin %s forwards here\n", o.Plan.Origin)
	}
	if o.Plan.Mode == observer.ModeShareSafeOpen {
		fmt.Fprintln(o.IO.ErrOut, "warning: share-safe-open: anyone who reaches the public origin can read every share_ready run")
	}
}
