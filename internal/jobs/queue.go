package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"riverqueue.com/riverui"
	"riverqueue.com/riverui/uiendpoints"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Config opens a [Queue].
type Config struct {
	// DB is a postgres:// URL for a fleet; empty means SQLite at SQLitePath.
	DB string
	// SQLitePath is the queue's SQLite file (<data-dir>/queue.db).
	SQLitePath string
	// Workers is how many runs this process works at once; 0 opens a
	// client that only submits and reads.
	Workers int
	// Worker works the runs; required when Workers > 0.
	Worker *Worker
	// JobTimeout bounds one attempt (default 5m); RescueAfter is how long
	// an attempt may stay running before River hands it to another worker
	// (default JobTimeout + 30s), which is how a killed worker's runs are
	// picked up.
	JobTimeout, RescueAfter time.Duration
	// PollInterval is how often workers look for new jobs (default 200ms).
	PollInterval time.Duration
	Logger       *slog.Logger
	// Capabilities, when set (the catalog), lets Submit and RunBatch check
	// each run's inputs against its capability before inserting it: a
	// sensitive input must come as a secret reference (see CheckInputs),
	// and a capability the catalog does not hold is refused. Every command
	// that submits sets it; without it only RunArgs.Validate applies.
	Capabilities Capabilities
	// Keys, when set (the store), binds idempotency keys for ever (see
	// [KeyStore]); every command that submits sets it. Without it a key
	// only merges the submits River finds unfinished.
	Keys KeyStore
	// Active, when set (heal's service), resolves "ID@active" for Submit's
	// checks and for each attempt the worker runs, and tells it of every
	// finished run of the active version (its canary). Without it
	// "ID@active" is a version the catalog does not hold.
	Active Active
}

// Validate checks c before anything opens.
func (c Config) Validate() error {
	switch {
	case c.DB != "" && !IsPostgres(c.DB):
		return errors.New("db: want a postgres:// URL, or none for SQLite under the data directory")
	case c.DB == "" && c.SQLitePath == "":
		return errors.New("queue: a SQLite path or a postgres:// URL is required")
	case c.Workers < 0:
		return fmt.Errorf("workers: want 0 or more, got %d", c.Workers)
	case c.Workers > 0 && c.Worker == nil:
		return errors.New("workers: no worker to run jobs with")
	case c.JobTimeout < 0 || c.RescueAfter < 0:
		return errors.New("job timeout and rescue delay must not be negative")
	case c.RescueAfter != 0 && c.RescueAfter <= c.JobTimeout:
		return fmt.Errorf("rescue after (%s) must be longer than the job timeout (%s)", c.RescueAfter, c.JobTimeout)
	}
	return nil
}

// IsPostgres reports whether db is a PostgreSQL URL.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// client is the part of a *river.Client[TTx] the queue uses; it does not
// depend on the driver's transaction type.
type client interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
}

// Queue is the run queue. Safe for concurrent use.
type Queue struct {
	c       client
	caps    Capabilities
	keys    KeyStore
	active  Active
	close   func()
	workers int
	stats   *drainStats // how this process's jobs ended (Drain)
	drained atomic.Bool // Drain ran: Stop has nothing left to do
	// timeout and rescue are the job timeout and rescue delay in effect,
	// which a batch takes as the fleet's (see [Progress.Rescue]).
	timeout, rescue time.Duration
	endpoints       uiendpoints.Bundle // River UI's view of the same client
}

// Open opens the queue's database, creates or upgrades River's tables
// (rivermigrate, serialized across processes), and returns a queue whose
// workers start with [Queue.Start].
func Open(ctx context.Context, cfg Config) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	stats := &drainStats{}
	rc := riverConfig(cfg, stats)
	var q *Queue
	var err error
	if IsPostgres(cfg.DB) {
		q, err = openPostgres(ctx, cfg.DB, rc, cfg.Workers)
	} else {
		q, err = openSQLite(ctx, cfg.SQLitePath, rc, cfg.Workers)
	}
	if err != nil {
		return nil, err
	}
	q.caps, q.keys, q.active, q.stats = cfg.Capabilities, cfg.Keys, cfg.Active, stats
	if cfg.Worker != nil {
		cfg.Worker.active = cfg.Active
	}
	q.timeout, q.rescue = rc.JobTimeout, rc.RescueStuckJobsAfter
	return q, nil
}

// fetchCooldown is the least time between two fetches of one worker
// process (River's FetchCooldown).
const fetchCooldown = 10 * time.Millisecond

func riverConfig(cfg Config, stats *drainStats) *river.Config {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	timeout := cfg.JobTimeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	rescue := cfg.RescueAfter
	if rescue == 0 {
		rescue = timeout + 30*time.Second
	}
	poll := cfg.PollInterval
	if poll == 0 {
		poll = 200 * time.Millisecond
	}
	// A worker that finishes a job fetches the next at most fetchCooldown
	// later. River's default (100 ms) left a lone session idle 50–100 ms
	// between runs of a batch (the poll loop's own fetch, made while every
	// slot was busy, starts the cooldown); a fetch is one indexed query.
	rc := &river.Config{Logger: logger, JobTimeout: timeout, RescueStuckJobsAfter: rescue,
		FetchCooldown: min(poll, fetchCooldown), FetchPollInterval: poll,
		CompletedJobRetentionPeriod: 30 * 24 * time.Hour, CancelledJobRetentionPeriod: 30 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 30 * 24 * time.Hour}
	if cfg.Workers > 0 {
		rc.Middleware = []rivertype.Middleware{jobLogMiddleware()}
		ws := river.NewWorkers()
		river.AddWorker[RunArgs](ws, counted{Worker: cfg.Worker, st: stats})
		rc.Workers = ws
		rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}}
	}
	return rc
}

// openSQLite opens the queue file with one connection (River's advice for
// SQLite), WAL and a busy timeout so several processes can share it.
func openSQLite(ctx context.Context, path string, rc *river.Config, workers int) (*Queue, error) {
	// 0600 in a 0700 directory before SQLite opens it (invariant 22).
	if err := fsx.PrepareDataFile(path); err != nil {
		return nil, fmt.Errorf("open queue %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open queue %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	drv := riversqlite.New(db)
	if err := migrateSQLite(ctx, db, drv); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate queue %s: %w", path, err)
	}
	c, err := river.NewClient(drv, rc)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("queue client: %w", err)
	}
	return &Queue{c: c, close: func() { db.Close() }, workers: workers, endpoints: riverui.NewEndpoints(c, nil)}, nil
}

// migrateSQLite applies River's migrations inside one BEGIN IMMEDIATE
// transaction, so two processes opening a new file migrate it once.
func migrateSQLite(ctx context.Context, db *sql.DB, drv *riversqlite.Driver) error {
	m, err := rivermigrate.New(drv, &rivermigrate.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, nil); err != nil {
		return err
	}
	return tx.Commit()
}

// migrateLock is the advisory lock key under which River's migrations run
// on PostgreSQL ("cuarivr" as a number).
const migrateLock = 0x6375617269767200

func openPostgres(ctx context.Context, dbURL string, rc *river.Config, workers int) (*Queue, error) {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("open queue: %w", err)
	}
	drv := riverpgxv5.New(pool)
	if err := migratePostgres(ctx, pool, drv); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate queue: %w", err)
	}
	c, err := river.NewClient(drv, rc)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue client: %w", err)
	}
	return &Queue{c: c, close: pool.Close, workers: workers, endpoints: riverui.NewEndpoints(c, nil)}, nil
}

// migratePostgres applies River's migrations, each in its own transaction
// (one adds an enum value a later statement uses, which PostgreSQL refuses
// inside one transaction), while this process holds a session advisory
// lock on a dedicated connection: workers starting together migrate once.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool, drv *riverpgxv5.Driver) error {
	m, err := rivermigrate.New(drv, &rivermigrate.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLock)); err != nil {
		return err
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrateLock))
	}()
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// Start starts the workers (a no-op without workers). Work stops when ctx
// ends or at [Queue.Stop].
func (q *Queue) Start(ctx context.Context) error {
	if q.workers == 0 {
		return nil
	}
	return q.c.Start(ctx)
}

// Stop waits for running jobs to finish, then stops the workers; after
// [Queue.Drain] it does nothing.
func (q *Queue) Stop(ctx context.Context) error {
	if q.workers == 0 || q.drained.Load() {
		return nil
	}
	return q.c.Stop(ctx)
}

// Close closes the database; Stop first when workers ran.
func (q *Queue) Close() { q.close() }

// QueuePath is the SQLite queue file of a data directory, beside the
// store's cua.db.
func QueuePath(dataDir string) string { return filepath.Join(dataDir, "queue.db") }
