package consolecmd

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/console"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/store"
)

//go:embed console.txt
var helpConsole string

// ParkFlags are the console flags of a command that serves one.
type ParkFlags struct {
	Addr            string
	AllowRemote     bool
	TLSCert, TLSKey string
	// tls is the pair Validate read, for StartForRun.
	tls *tls.Certificate
}

// Bind adds --console-addr (or --addr), --allow-remote, --tls-cert and
// --tls-key.
func (p *ParkFlags) Bind(cmd *cobra.Command, addrFlag string) {
	cmd.Flags().StringVar(&p.Addr, addrFlag, console.DefaultAddr, "address of the operator console")
	cmd.Flags().BoolVar(&p.AllowRemote, "allow-remote", false, "let the console listen on a non-loopback address (needs --tls-cert and --tls-key)")
	cmd.Flags().StringVar(&p.TLSCert, "tls-cert", "", "PEM certificate (chain) file: the console serves HTTPS")
	cmd.Flags().StringVar(&p.TLSKey, "tls-key", "", "PEM private key file of --tls-cert")
}

// Validate checks the flags, and reads the TLS pair, before anything
// opens: a non-loopback address needs --allow-remote and TLS.
func (p *ParkFlags) Validate() error {
	if p.TLSCert != "" || p.TLSKey != "" {
		cert, err := console.LoadTLS(p.TLSCert, p.TLSKey)
		if err != nil {
			return cmdutil.FlagErrorf("%v", err)
		}
		p.tls = cert
	}
	if err := console.CheckAddr(p.Addr, p.AllowRemote, p.tls != nil); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	return nil
}

// StartForRun starts a console over st's intervention queue, signing in
// the principals of st's directory, and prints where it listens on f's
// stderr. p must have been validated.
func StartForRun(ctx context.Context, f *cmdutil.IOStreams, p ParkFlags, st store.Store, red *redact.Redactor) (*console.Server, error) {
	return console.Start(ctx, console.Options{Addr: p.Addr, AllowRemote: p.AllowRemote, TLS: p.tls, Auth: Authenticator(st),
		Queue: hitlstore.New(st), Redact: red.String, Logger: cmdutil.NewLogger(f.ErrOut, red)}, f.ErrOut)
}

// Authenticator is the console's sign-in check over st's principal
// directory: a principal token signs in as its verified principal; a
// locked principal's refusal says until when (read from st).
func Authenticator(st store.Store) console.Authenticator {
	dir := principal.NewDirectory(st, nil)
	return console.AuthFunc(func(ctx context.Context, token string) (console.Identity, error) {
		who, err := dir.Authenticate(ctx, token)
		if errors.Is(err, principal.ErrLocked) {
			name, _ := principal.ParseToken(token)
			rec, gerr := st.GetPrincipal(ctx, name)
			if gerr != nil {
				return console.Identity{}, errors.Join(err, gerr)
			}
			return console.Identity{}, &console.LockedError{Until: rec.LockedUntil, Err: err}
		}
		if err != nil {
			return console.Identity{}, err
		}
		if !who.Verified {
			return console.Identity{}, fmt.Errorf("console: %s is not a verified principal", who)
		}
		return console.Identity{Name: who.Name, Role: string(who.Role)}, nil
	})
}

type consoleOptions struct {
	IO    *cmdutil.IOStreams
	Park  ParkFlags
	Store launch.StoreOptions
	// RelayTokenFile holds the relay credential (--relay-token-file).
	RelayTokenFile string
	getenv         func(string) string
	fronts         *console.RelayClient
	// For tests: stop after this long (0: until interrupted).
	serveFor time.Duration
}

// NewCmdConsole builds `cua console`.
func NewCmdConsole(f *cmdutil.Factory, runF func(context.Context, *consoleOptions) error) *cobra.Command {
	opts := &consoleOptions{IO: f.IO, Store: launch.StoreOptions{Getenv: f.Getenv}, getenv: f.Getenv}
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
			fronts, err := relayClient(opts.RelayTokenFile, opts.getenv)
			if err != nil {
				return err
			}
			opts.fronts = fronts
			opts.Store.DataDir = launch.DataDir(opts.Store.DataDir, f.Getenv)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runConsole(cmd.Context(), opts)
		},
	}
	opts.Park.Bind(cmd, "addr")
	cmd.Flags().StringVar(&opts.RelayTokenFile, "relay-token-file", "",
		"file holding the relay credential (the "+DefaultRelayPrincipal+" principal's token; default $"+RelayTokenEnv+"): reach runs parked in workers")
	cmdutil.StoreFlags(cmd, &opts.Store, true)
	return cmd
}

func runConsole(ctx context.Context, o *consoleOptions) error {
	_, st, err := cmdutil.OpenCatalog(ctx, o.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	fronts, red := o.fronts, redact.New()
	if fronts != nil {
		red.RegisterLiteral(fronts.Token)
	}
	srv, err := console.Start(ctx, console.Options{Addr: o.Park.Addr, AllowRemote: o.Park.AllowRemote, TLS: o.Park.tls,
		Auth: Authenticator(st), Queue: hitlstore.New(st), Redact: red.String, Logger: cmdutil.NewLogger(o.IO.ErrOut, red),
		Fronts: fronts}, o.IO.ErrOut)
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
