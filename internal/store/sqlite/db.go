// Package sqlite is the embedded adapter of the store port: one SQLite file
// (the default is <data-dir>/cua.db) through modernc.org/sqlite, pure Go, no
// cgo. It opens the file in WAL mode with a busy timeout and foreign keys on,
// starts every write with BEGIN IMMEDIATE (so concurrent writers, in this
// process or another, queue instead of failing), and applies its embedded
// migrations in one transaction each, recorded in schema_migrations.
//
// It owns the SQLite dialect of the schema and nothing else: it must never
// compute a content hash, judge an approval's bounds, read a clock other than
// [store.Config.Now], or import another adapter.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/store"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// busyTimeout is how long a writer waits for another writer's lock.
const busyTimeout = 30 * time.Second

// DB is a store backed by one SQLite file. Safe for concurrent use.
type DB struct {
	db  *sql.DB
	cfg store.Config
	now func() time.Time
}

var _ store.Store = (*DB)(nil)

// Open opens (creating if needed) the SQLite database at path and migrates
// it to the latest schema.
func Open(ctx context.Context, path string, cfg store.Config) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("open sqlite: path is required: %w", store.ErrInvalid)
	}
	// 0600 in a 0700 directory before SQLite opens it (invariant 22).
	if err := fsx.PrepareDataFile(path); err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	d := &DB{db: sdb, cfg: cfg, now: cfg.Clock()}
	if err := d.migrate(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return d, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// SchemaVersion returns the highest applied migration version.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := d.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// migrate applies, each in its own transaction, the migrations newer than
// the recorded version. BEGIN IMMEDIATE makes two processes opening a new
// file at once apply each migration exactly once.
func (d *DB) migrate(ctx context.Context) error {
	ms, err := store.Migrations(migrationFS, "migrations")
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := d.write(ctx, "migrate", func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
				version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, d.now().UnixMicro())
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %03d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// write runs fn in one BEGIN IMMEDIATE transaction and commits it.
func (d *DB) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", op, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	d.cfg.Hook(op)
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", op, err)
	}
	return nil
}

// querier is what reads need from *sql.DB and *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// micro encodes t as unix microseconds, NULL for the zero time.
func micro(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// fromMicro decodes what micro encoded.
func fromMicro(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}

// notFound maps sql.ErrNoRows to store.ErrNotFound naming what.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// or returns t, or now when t is zero, in store precision.
func or(t time.Time, now func() time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return store.Micro(t)
}
