package consolecmd

import (
	"context"
	_ "embed"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/console"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/store"
)

//go:embed console.txt
var helpConsole string

// ParkFlags are the console flags of a command that serves one.
type ParkFlags struct {
	Addr        string
	AllowRemote bool
	TokenFile   string
}

// Bind adds --console-addr (or --addr), --allow-remote and --token-file.
func (p *ParkFlags) Bind(cmd *cobra.Command, addrFlag string) {
	cmd.Flags().StringVar(&p.Addr, addrFlag, console.DefaultAddr, "address of the operator console")
	cmd.Flags().BoolVar(&p.AllowRemote, "allow-remote", false, "let the console listen on a non-loopback address")
	cmd.Flags().StringVar(&p.TokenFile, "token-file", "", "file whose first line is the operators' sign-in token (default: a new one, printed)")
}

// Validate checks the flags before anything opens.
func (p *ParkFlags) Validate() error {
	if p.TokenFile != "" {
		if _, err := console.ReadToken(p.TokenFile); err != nil {
			return cmdutil.FlagErrorf("--token-file: %v", err)
		}
	}
	if err := console.CheckAddr(p.Addr, p.AllowRemote); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	return nil
}

// StartForRun starts a console over st's intervention queue, printing
// where it listens on f's stderr.
func StartForRun(ctx context.Context, f *cmdutil.IOStreams, p ParkFlags, st store.Store, red *redact.Redactor) (*console.Server, error) {
	return console.Start(ctx, console.Options{Addr: p.Addr, AllowRemote: p.AllowRemote, TokenFile: p.TokenFile,
		Queue: hitlstore.New(st), Redact: red.String, Logger: cmdutil.NewLogger(f.ErrOut, red)}, f.ErrOut)
}

type consoleOptions struct {
	IO    *cmdutil.IOStreams
	Park  ParkFlags
	Store launch.StoreOptions
	// For tests: stop after this long (0: until interrupted).
	serveFor time.Duration
}

// NewCmdConsole builds `cua console`.
func NewCmdConsole(f *cmdutil.Factory, runF func(context.Context, *consoleOptions) error) *cobra.Command {
	opts := &consoleOptions{IO: f.IO, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{
		Use:     "console",
		Short:   "Serve the operator console over the intervention queue",
		Long:    cmdutil.Help(helpConsole, false),
		Example: cmdutil.Help(helpConsole, true),
		Args:    cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Park.Validate(); err != nil {
				return err
			}
			opts.Store.DataDir = launch.DataDir(opts.Store.DataDir, f.Getenv)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runConsole(cmd.Context(), opts)
		},
	}
	opts.Park.Bind(cmd, "addr")
	cmdutil.StoreFlags(cmd, &opts.Store, true)
	return cmd
}

func runConsole(ctx context.Context, o *consoleOptions) error {
	_, st, err := cmdutil.OpenCatalog(ctx, o.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := StartForRun(ctx, o.IO, o.Park, st, redact.New())
	if err != nil {
		return err
	}
	defer srv.Close()
	if o.serveFor > 0 {
		t := time.NewTimer(o.serveFor)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		return nil
	}
	<-ctx.Done()
	return nil
}
