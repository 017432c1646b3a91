package workercmd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmd/console"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/heal"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/runner"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/secret"
	"github.com/cuahq/cua/internal/store"
)

// WorkerOptions are the worker's flags.
type WorkerOptions struct {
	IO          *cmdutil.IOStreams
	Env         func(string) string
	Store       launch.StoreOptions
	Queue       jobs.Config
	Launch      launch.Options
	SecretsFile string
	// WarmTTL keeps signed-on browser contexts between runs (--warm-ttl).
	WarmTTL time.Duration
	// AllowOrigins are the origins a run's base URL may name besides those
	// its capability declares (--allow-origin, canonical scheme://host:port).
	AllowOrigins []string
	// StopGrace is how long running runs get to end at a stop signal
	// before they are cancelled and handed back (--stop-grace).
	StopGrace time.Duration
	// Relay parks runs that need a person in this worker's session relay
	// (--park and the relay flags).
	Relay consolecmd.RelayFlags
	// endParks, set by StartCatalog with --park, ends every park at a
	// stop signal (the runs end NEEDS_HUMAN, as unparked ones).
	endParks func()
}

// NewCmdWorker builds `cua worker`.
func NewCmdWorker(f *cmdutil.Factory, runF func(context.Context, *WorkerOptions) error) *cobra.Command {
	o := &WorkerOptions{IO: f.IO, Env: f.Getenv, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{
		Use:     "worker",
		Short:   "Work the run queue (SQLite beside the store, or a fleet's PostgreSQL)",
		Long:    cmdutil.Help(helpWorker, false),
		Example: cmdutil.Help(helpWorker, true),
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
	QueueFlags(cmd, &o.Store, &o.Queue)
	AllowOriginFlag(cmd, &o.AllowOrigins)
	StopGraceFlag(cmd, &o.StopGrace)
	SessionFlags(cmd, o)
	consolecmd.BindRelay(cmd, &o.Relay)
	cmdutil.PublishEvidenceFlag(f, cmd)
	return cmd
}

// QueueFlags binds the flags every queue command shares: --db,
// --data-dir, --workers, --job-timeout and --rescue-after.
func QueueFlags(cmd *cobra.Command, st *launch.StoreOptions, q *jobs.Config) {
	cmdutil.StoreFlags(cmd, st, true)
	fl := cmd.Flags()
	fl.IntVar(&q.Workers, "workers", 2, "runs worked at once by this process")
	fl.DurationVar(&q.JobTimeout, "job-timeout", 5*time.Minute, "longest one attempt of a run may take")
	fl.DurationVar(&q.RescueAfter, "rescue-after", 0, "hand a run whose worker vanished to another after this long (default job timeout + 30s)")
}

// SessionFlags binds --warm-ttl, --browser and --secrets for a command
// that works runs in its own browser sessions.
func SessionFlags(cmd *cobra.Command, o *WorkerOptions) {
	fl := cmd.Flags()
	fl.DurationVar(&o.WarmTTL, "warm-ttl", 5*time.Minute,
		"keep a signed-on browser context this long between runs of a capability (under the app's session timeout; 0: a fresh context per run)")
	fl.StringVar(&o.Launch.Browser, "browser", "", "Chromium executable (default $CUA_BROWSER or /usr/bin/chromium)")
	fl.StringVar(&o.SecretsFile, "secrets", "", "JSON file of secret values (mode 0600)")
}

// ValidateQueue checks what worker, batch and serve share: the queue's
// location, how many runs work at once (flag, >= least) and --warm-ttl.
func (o *WorkerOptions) ValidateQueue(flag string, least int) error {
	if err := ResolveQueue(&o.Store, &o.Queue); err != nil {
		return err
	}
	if o.Queue.Workers < least {
		return cmdutil.FlagErrorf("%s: want %d or more, got %d", flag, least, o.Queue.Workers)
	}
	if o.WarmTTL < 0 {
		return cmdutil.FlagErrorf("--warm-ttl: want 0 or a positive duration, got %s", o.WarmTTL)
	}
	return nil
}

// Validate checks the flags before anything opens.
func (o *WorkerOptions) Validate() error {
	if err := o.ValidateQueue("--workers", 1); err != nil {
		return err
	}
	if err := CheckStopGrace(o.StopGrace); err != nil {
		return err
	}
	if err := o.Relay.Validate(); err != nil {
		return err
	}
	o.Queue.JobTimeout += o.Relay.Hold() // a parked run holds its job
	return nil
}

// ResolveQueue fills the queue's location from the store's: the same
// PostgreSQL database, or <data-dir>/queue.db; a bad --db is a FlagError.
func ResolveQueue(st *launch.StoreOptions, q *jobs.Config) error {
	if st.DB == "" {
		st.DB = st.Getenv("CUA_DB")
	}
	st.DataDir = launch.DataDir(st.DataDir, st.Getenv)
	q.DB, q.SQLitePath = st.DB, jobs.QueuePath(st.DataDir)
	if q.JobTimeout <= 0 {
		return cmdutil.FlagErrorf("--job-timeout: want a positive duration")
	}
	if q.RescueAfter != 0 && q.RescueAfter <= q.JobTimeout {
		return cmdutil.FlagErrorf("--rescue-after (%s) must be longer than --job-timeout (%s)", q.RescueAfter, q.JobTimeout)
	}
	if q.DB != "" && !jobs.IsPostgres(q.DB) {
		return cmdutil.FlagErrorf("--db: %v", launch.ErrDBSpec)
	}
	return nil
}

// Run works the queue until ctx ends (SIGINT or SIGTERM), then drains
// (see Drain); a second signal stops at once.
func Run(ctx context.Context, o *WorkerOptions) error {
	q, stop, err := Start(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "worker: %d at once on %s\n", o.Queue.Workers, where(o.Queue))
	<-ctx.Done()
	force, release := OnSignal()
	defer release()
	o.endParks() // set by Start: parked runs end NEEDS_HUMAN now
	err = Drain(ctx, o, q, "worker", force)
	Close(stop, err != nil)
	return err
}

// Close runs stop; after a forced stop it waits for it at most 2s.
func Close(stop func(), forced bool) {
	if !forced {
		stop()
		return
	}
	closed := make(chan struct{})
	go func() { stop(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
	}
}

// Start opens the catalog and the queue and starts workers; stop waits
// for running runs (up to the job timeout) and closes everything.
func Start(ctx context.Context, o *WorkerOptions) (*jobs.Queue, func(), error) {
	q, _, _, stop, err := StartCatalog(ctx, o)
	return q, stop, err
}

// StartCatalog is Start, also returning the catalog and the store it
// opened (closed by stop).
func StartCatalog(ctx context.Context, o *WorkerOptions) (*jobs.Queue, *catalog.Catalog, store.Store, func(), error) {
	sec, err := secret.NewStore(o.Env, o.SecretsFile)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cat, st, err := cmdutil.OpenCatalog(ctx, o.Store)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// The queue's own log knows every secret of the store; each run's log
	// is built over that run's redactor, which also learns what the run
	// resolves.
	red := redact.New()
	for _, v := range sec.Values() {
		red.RegisterLiteral(v)
	}
	rc := runner.Config{DataDir: o.Store.DataDir, Launch: o.Launch, Secrets: sec,
		WarmTTL: o.WarmTTL, MaxWarm: o.Queue.Workers, AllowOrigins: o.AllowOrigins,
		Logger: func(runRed *redact.Redactor) *slog.Logger { return cmdutil.NewLogger(o.IO.ErrOut, runRed) }}
	relay, closeRelay, err := o.Relay.Start(ctx, st, red, o.IO)
	if err != nil {
		st.Close()
		return nil, nil, nil, nil, err
	}
	if relay != nil {
		rc.Park, rc.ParkTimeout = relay, o.Relay.Timeout
	}
	run := runner.New(context.WithoutCancel(ctx), rc)
	o.endParks = run.EndParks
	closeAll := func() { closeRelay(); run.Close(); st.Close() }
	qc := o.Queue
	qc.Worker = jobs.NewWorker(cat, st, sec, run, cmdutil.NewLogger(o.IO.ErrOut, red))
	qc.Capabilities, qc.Keys, qc.Active = cat, st, heal.OpenWatch(st, cat)
	q, err := jobs.Open(ctx, qc)
	if err != nil {
		closeAll()
		return nil, nil, nil, nil, err
	}
	if err := q.Start(context.WithoutCancel(ctx)); err != nil {
		q.Close()
		closeAll()
		return nil, nil, nil, nil, err
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), qc.JobTimeout)
		defer cancel()
		_ = q.Stop(sctx)
		q.Close()
		closeAll()
	}
	return q, cat, st, stop, nil
}

// OpenClient opens the catalog and a queue that only submits and reads
// (no workers), checking what it submits against the catalog (a sensitive
// input must come as a secret reference); done closes both.
func OpenClient(ctx context.Context, st launch.StoreOptions, qc jobs.Config) (q *jobs.Queue, done func(), err error) {
	q, _, _, done, err = OpenClientCatalog(ctx, st, qc)
	return q, done, err
}

// OpenClientCatalog is OpenClient, also returning the catalog and its
// store (closed by done).
func OpenClientCatalog(ctx context.Context, st launch.StoreOptions, qc jobs.Config) (*jobs.Queue, *catalog.Catalog, store.Store, func(), error) {
	cat, s, err := cmdutil.OpenCatalog(ctx, st)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	qc.Workers, qc.Worker, qc.Capabilities, qc.Keys, qc.Active = 0, nil, cat, s, heal.OpenWatch(s, cat)
	q, err := jobs.Open(ctx, qc)
	if err != nil {
		s.Close()
		return nil, nil, nil, nil, err
	}
	return q, cat, s, func() { q.Close(); s.Close() }, nil
}

func where(q jobs.Config) string {
	if q.DB != "" {
		return "PostgreSQL"
	}
	return q.SQLitePath
}
