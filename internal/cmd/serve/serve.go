package servecmd

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmd/worker"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/secret"
	"github.com/cuahq/cua/internal/store"
)

// ServeOptions are the flags of `cua serve`.
type ServeOptions struct {
	Worker      workercmd.WorkerOptions
	Addr        string
	Token       string
	RiverUI     bool
	AllowRemote bool
	TLSCert     string
	TLSKey      string

	cert *tls.Certificate // read by Validate from --tls-cert and --tls-key
}

// NewCmdServe builds `cua serve`.
func NewCmdServe(f *cmdutil.Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	o := &ServeOptions{Worker: workercmd.WorkerOptions{IO: f.IO, Env: f.Getenv, Store: launch.StoreOptions{Getenv: f.Getenv}}}
	cmd := &cobra.Command{
		Use:     "serve",
		Short:   "Serve the run queue's HTTP API with embedded workers",
		Long:    cmdutil.Help(helpServe, false),
		Example: cmdutil.Help(helpServe, true),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return Run(cmd.Context(), o)
		},
	}
	w := &o.Worker
	workercmd.QueueFlags(cmd, &w.Store, &w.Queue)
	workercmd.AllowOriginFlag(cmd, &w.AllowOrigins)
	workercmd.StopGraceFlag(cmd, &w.StopGrace)
	fl := cmd.Flags()
	fl.StringVar(&o.Addr, "addr", "127.0.0.1:8810", "listen address (loopback unless --allow-remote)")
	fl.StringVar(&o.Token, "token", "", "the deployment's serve token, the service principal serve-token "+
		"(default $CUA_SERVE_TOKEN, else made and written to <data-dir>/serve.token)")
	fl.BoolVar(&o.AllowRemote, "allow-remote", false, "allow a non-loopback --addr (needs --tls-cert and --tls-key)")
	fl.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with this PEM certificate chain (with --tls-key)")
	fl.StringVar(&o.TLSKey, "tls-key", "", "the PEM private key of --tls-cert")
	workercmd.SessionFlags(cmd, w)
	fl.BoolVar(&o.RiverUI, "river-ui", false, "also serve River's own UI, read-only, under /river/ (browsers sign in at /signin with the token)")
	cmdutil.PublishEvidenceFlag(f, cmd)
	return cmd
}

// Validate checks the flags before anything opens.
func (o *ServeOptions) Validate() error {
	if err := o.Worker.ValidateQueue("--workers", 0); err != nil {
		return err
	}
	if err := workercmd.CheckStopGrace(o.Worker.StopGrace); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return cmdutil.FlagErrorf("--addr %q: want HOST:PORT", o.Addr)
	}
	if err := o.checkBind(); err != nil {
		return err
	}
	if o.Token == "" {
		o.Token = o.Worker.Env("CUA_SERVE_TOKEN")
	}
	return nil
}

// Run serves until ctx ends (SIGINT or SIGTERM), then drains its workers
// as cua worker does; a second signal stops at once.
func Run(ctx context.Context, o *ServeOptions) error {
	w := &o.Worker
	var q *jobs.Queue
	var cat *catalog.Catalog
	var st store.Store
	var err error
	var stop func() // the workers', nil once drained
	if w.Queue.Workers > 0 {
		if q, cat, st, stop, err = workercmd.StartCatalog(ctx, w); err != nil {
			return err
		}
		defer func() {
			if stop != nil {
				stop()
			}
		}()
	} else {
		var done func()
		if q, cat, st, done, err = workercmd.OpenClientCatalog(ctx, w.Store, w.Queue); err != nil {
			return err
		}
		defer done()
	}
	if o.Token == "" {
		if o.Token, err = writeToken(w.Store.DataDir); err != nil {
			return err
		}
	}
	ln, scheme, err := o.listen(ctx)
	if err != nil {
		return err
	}
	h, err := newAPI(q, cat, w.AllowOrigins, ln.Addr().String(), o.Token)
	if err != nil {
		ln.Close()
		return err
	}
	h.Principals(directory{principal.NewDirectory(st, nil)})
	h.Engine(cat, w.Store.DataDir) // cua replay --engine
	if o.cert != nil {
		h.TLS(o.certNames())
	}
	if o.RiverUI {
		if err := mountRiverUI(ctx, w, q, h); err != nil {
			ln.Close()
			return err
		}
		fmt.Fprintf(w.IO.ErrOut, "River UI (read-only): %s://%s%s/ (sign in with a token)\n", scheme, ln.Addr(), api.RiverUIPrefix)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	fmt.Fprintf(w.IO.ErrOut, "serving %s://%s (%d workers)\n", scheme, ln.Addr(), w.Queue.Workers)
	forced, release := make(chan (<-chan struct{}), 1), func() {}
	go func() {
		<-ctx.Done()
		var force <-chan struct{}
		force, release = workercmd.OnSignal() // a second signal
		forced <- force
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close() // what the grace period left open
		}
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	} else if stop == nil {
		return nil
	}
	force := <-forced
	defer release()
	err = workercmd.Drain(ctx, w, q, "serve", force)
	workercmd.Close(stop, err != nil)
	stop = nil
	return err
}

// writeToken makes a token and writes it to <dataDir>/serve.token (0600,
// temp file + rename).
func writeToken(dataDir string) (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b[:])
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dataDir, "serve.token")
	tmp, err := os.CreateTemp(dataDir, ".serve.token-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(tok + "\n"); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return tok, os.Rename(tmp.Name(), path)
}

// mountRiverUI mounts River's UI on h; its log knows every stored secret,
// as the workers' queue log does.
func mountRiverUI(ctx context.Context, w *workercmd.WorkerOptions, q *jobs.Queue, h *api.Handler) error {
	sec, err := secret.NewStore(w.Env, w.SecretsFile)
	if err != nil {
		return err
	}
	red := redact.New()
	for _, v := range sec.Values() {
		red.RegisterLiteral(v)
	}
	ui, err := q.UI(ctx, api.RiverUIPrefix, cmdutil.NewLogger(w.IO.ErrOut, red))
	if err != nil {
		return err
	}
	h.MountRiverUI(ui)
	return nil
}

// directory is the principal directory as the API asks it: who holds a
// token, as recorded (Principal.String).
type directory struct{ d *principal.Directory }

// Authenticate names the principal tok belongs to.
func (a directory) Authenticate(ctx context.Context, tok string) (string, error) {
	p, err := a.d.Authenticate(ctx, tok)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}
