package mcpcmd

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mcpserver"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/secret"
)

type mcpOptions struct {
	IO  *cmdutil.IOStreams
	Env func(string) string

	HTTP        string
	MaxSessions int
	BaseURL     string
	ConsoleURL  string
	DataDir     string
	SecretsFile string
	Launch      launch.Options      // --browser, --cdp-url, --headful
	Store       launch.StoreOptions // --db
}

// NewCmdMCP is `cua mcp`.
func NewCmdMCP(f *cmdutil.Factory, runF func(context.Context, *mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{IO: f.IO, Env: f.Getenv, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{
		Use:     "mcp",
		Short:   "Serve approved capabilities as MCP tools (stdio, or loopback HTTP)",
		Long:    cmdutil.Help(helpMCP, false),
		Example: cmdutil.Help(helpMCP, true),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMCP(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.HTTP, "http", "", "serve streamable HTTP on this loopback ADDR (127.0.0.1:PORT) instead of stdio; every request needs a principal's bearer token")
	fl.IntVar(&opts.MaxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "browser contexts open at once; further calls wait")
	fl.StringVar(&opts.BaseURL, "base-url", "http://127.0.0.1:8811", "base URL of the application")
	fl.StringVar(&opts.ConsoleURL, "console-url", "", "operator console where a NEEDS_HUMAN run is taken over")
	fl.StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values (mode 0600)")
	fl.StringVar(&opts.Launch.Browser, "browser", "", "Chromium executable (default $CUA_BROWSER or /usr/bin/chromium)")
	fl.StringVar(&opts.Launch.CDPURL, "cdp-url", "", "attach to a running browser's DevTools endpoint instead of launching one")
	fl.BoolVar(&opts.Launch.Headful, "headful", false, "show the browser window")
	cmdutil.DataDirFlag(cmd, &opts.DataDir)
	cmdutil.StoreFlags(cmd, &opts.Store, false)
	cmdutil.PublishEvidenceFlag(f, cmd)
	return cmd
}

// validate checks every flag before a store or browser opens.
func (o *mcpOptions) validate() error {
	if o.HTTP != "" {
		if err := mcpserver.CheckLoopback(o.HTTP); err != nil {
			return cmdutil.FlagErrorf("--http %v", err)
		}
	}
	if o.MaxSessions < 1 {
		return cmdutil.FlagErrorf("--max-sessions %d: want at least 1", o.MaxSessions)
	}
	if err := cmdutil.HTTPURL("--base-url", o.BaseURL); err != nil {
		return err
	}
	if o.ConsoleURL != "" {
		if err := cmdutil.HTTPURL("--console-url", o.ConsoleURL); err != nil {
			return err
		}
	}
	o.DataDir = launch.DataDir(o.DataDir, o.Env)
	o.Store.DataDir = o.DataDir
	return nil
}

func runMCP(ctx context.Context, o *mcpOptions) error {
	secrets, err := secret.NewStore(o.Env, o.SecretsFile)
	if err != nil {
		return err
	}
	// Bind first, so a taken port fails before a browser starts.
	var ln net.Listener
	if o.HTTP != "" {
		if ln, err = mcpserver.Listen(o.HTTP); err != nil {
			return err
		}
		defer ln.Close()
	}
	cat, st, err := cmdutil.OpenCatalog(ctx, o.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	// The browser's logger outlives every run: it redacts every secret a
	// run may resolve.
	red := redact.New()
	knowSecrets(red, secrets)
	lo := o.Launch
	lo.BaseURL, lo.Logger = o.BaseURL, cmdutil.NewLogger(o.IO.ErrOut, red)
	l := launch.New(lo)
	defer l.Close()
	// The browser starts now, under the command's context, so it outlives
	// every call and a missing Chromium shows before a client connects.
	sess, err := l.Open(ctx)
	if err != nil {
		return err
	}
	sess.Close()
	srv, err := mcpserver.New(mcpserver.Config{Catalog: cat, Open: opener(l, o.BaseURL), BaseURL: o.BaseURL, DataDir: o.DataDir, Secrets: secrets,
		MaxSessions: o.MaxSessions, ConsoleURL: o.ConsoleURL, Version: cmdutil.Version(),
		Log: o.IO.ErrOut})
	if err != nil {
		return err
	}
	if o.HTTP == "" {
		return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(o.IO.In), Writer: nopCloser{o.IO.Out}})
	}
	fmt.Fprintf(o.IO.ErrOut, "cua mcp: MCP endpoint http://%s/ (streamable HTTP), every request with Authorization: Bearer <principal token> (Ctrl-C stops)\n", ln.Addr())
	return srv.Serve(ctx, ln, directory{principal.NewDirectory(st, nil)})
}

// directory is the principal directory as the MCP server asks it: who
// holds a token, as recorded (Principal.String).
type directory struct{ d *principal.Directory }

// Authenticate names the principal tok belongs to.
func (a directory) Authenticate(ctx context.Context, tok string) (string, error) {
	p, err := a.d.Authenticate(ctx, tok)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// opener opens a call's session: a context in the shared browser for a web
// capability, a state-contract session on its allowed origins for a state
// one.
func opener(l *launch.Launcher, base string) func(*domain.Capability) pipeline.Opener {
	return func(c *domain.Capability) pipeline.Opener {
		if c.Surface == domain.SurfaceState {
			return launch.New(launch.Options{Kind: c.Surface, BaseURL: base, AllowedDomains: c.Policy.AllowedDomains}).Open
		}
		return l.Open
	}
}

// knowSecrets teaches red every value of the secret store.
func knowSecrets(red *redact.Redactor, s *secret.Store) {
	for _, v := range s.Values() {
		red.RegisterLiteral(v)
	}
}

// nopCloser leaves the command's stdout open when the session ends.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
