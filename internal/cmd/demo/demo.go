package democmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/demo"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/redact"
)

type demoOptions struct {
	IO       *cmdutil.IOStreams
	Env      func(string) string
	Dir      string
	Cassette string
	DataDir  string
	Browser  string
	Desktop  string
	JSON     bool
}

func NewCmdDemo(f *cmdutil.Factory, runF func(context.Context, *demoOptions) error) *cobra.Command {
	opts := &demoOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the verified story against the mock back office, stage by stage",
		Long:  cmdutil.Help(helpDemo, false),
		Args:  cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.DataDir = launch.DataDir(opts.DataDir, opts.Env)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDemo(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "capabilities", "examples/capabilities", "directory of the reference capabilities")
	cmd.Flags().StringVar(&opts.Cassette, "cassette", "examples/cassettes/savings_balance.json", "recorded discovery of the savings-balance goal")
	cmdutil.DataDirFlag(cmd, &opts.DataDir)
	cmd.Flags().StringVar(&opts.Desktop, "desktop", "internal/surface/desktop/testdata/capabilities/mousepad.write_note.yaml",
		"desktop capability the desktop stage replays (\"\" leaves the stage out)")
	cmd.Flags().StringVar(&opts.Browser, "browser", "", "Chromium executable (default $CUA_BROWSER or /usr/bin/chromium)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the stages as JSON")
	return cmd
}

func runDemo(ctx context.Context, o *demoOptions) error {
	// A desktop capability that is not there is the caller's mistake,
	// named before MemberDesk or a browser starts.
	if o.Desktop != "" {
		if st, err := os.Stat(o.Desktop); err != nil || !st.Mode().IsRegular() {
			return cmdutil.FlagErrorf("--desktop %s: not a capability file here (run from the repository root, or give its path; \"\" leaves the stage out)", o.Desktop)
		}
	}
	red := redact.New()
	// The queue stage runs this binary as cua batch and two cua workers.
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("demo: find the cua binary: %w", err)
	}
	line := "%-3v %-36s %-5s %-17s %6v  %s\n"
	rep, err := demo.Run(ctx, demo.Config{
		Capabilities: o.Dir, DataDir: o.DataDir, Browser: o.Browser, Cassette: o.Cassette,
		Discoverer: demo.Pipeline, Redactor: red, Bin: bin, Desktop: o.Desktop, Logger: cmdutil.NewLogger(o.IO.ErrOut, red),
		OnStart: func(url string) {
			if !o.JSON {
				fmt.Fprintf(o.IO.Out, "MemberDesk on %s; evidence under %s\n", url, filepath.Join(o.DataDir, "runs"))
				fmt.Fprintf(o.IO.Out, line, "#", "stage", "", "status", "ms", "detail")
			}
		},
		OnStage: func(n int, r *demo.Result) {
			if !o.JSON {
				fmt.Fprintf(o.IO.Out, line, n, r.Name, r.Mark(), r.Status(), r.DurationMS(), r.Detail)
			}
		},
	})
	switch {
	case err != nil:
		return err
	case o.JSON:
		err = cmdutil.WriteJSON(o.IO.Out, map[string]any{"schema_version": cmdutil.JSONSchemaVersion, "stages": rep.Stages, "passed": rep.Passed()})
	case rep.Passed():
		fmt.Fprintf(o.IO.Out, "verdict: PASS (%d of %d stages behaved as declared)\n", len(rep.Stages), len(rep.Stages))
	default:
		fmt.Fprintf(o.IO.Out, "verdict: FAIL (%d of %d stages misbehaved)\n", rep.Failed, len(rep.Stages))
	}
	if err == nil && !rep.Passed() {
		err = &cmdutil.ExitError{Code: 1}
	}
	return err
}
