// Package postgres is the fleet adapter of the store port: the same schema
// as store/sqlite on PostgreSQL through pgx/v5 (a pgxpool), for many
// processes on many machines (`--db postgres://…` or CUA_DB). Writes are
// READ COMMITTED transactions whose contested steps are single conditional
// statements (INSERT … ON CONFLICT DO NOTHING, UPDATE … WHERE <still
// free>) or SELECT … FOR UPDATE, so concurrent writers never lose an
// update; migrations are embedded, applied one transaction each under an
// advisory lock and recorded in schema_migrations.
//
// It owns the PostgreSQL dialect of the schema and nothing else: it must
// never compute a content hash, judge an approval's bounds, read a clock
// other than [store.Config.Now], or import another adapter.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cuahq/cua/internal/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLock is the advisory lock key that serializes migrations of one
// database across processes.
const migrationLock = 0x637561 // "cua"

// DB is a store backed by a PostgreSQL database. Safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool
	cfg  store.Config
	now  func() time.Time
}

var _ store.Store = (*DB)(nil)

// Open connects to the database at dsn (a postgres:// URL or a key=value
// string) and migrates it to the latest schema.
func Open(ctx context.Context, dsn string, cfg store.Config) (*DB, error) {
	if dsn == "" {
		return nil, fmt.Errorf("open postgres: dsn is required: %w", store.ErrInvalid)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	d := &DB{pool: pool, cfg: cfg, now: cfg.Clock()}
	if err := d.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return d, nil
}

// Close closes every connection of the pool.
func (d *DB) Close() error {
	d.pool.Close()
	return nil
}

// SchemaVersion returns the highest applied migration version.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := d.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// migrate applies, each in its own transaction holding the advisory lock,
// the migrations newer than the recorded version.
func (d *DB) migrate(ctx context.Context) error {
	ms, err := store.Migrations(migrationFS, "migrations")
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := d.write(ctx, "migrate", func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
				version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)`); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, d.now())
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %03d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// write runs fn in one transaction and commits it.
func (d *DB) write(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", op, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	d.cfg.Hook(op)
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("%s: commit: %w", op, err)
	}
	return nil
}

// querier is what reads need from the pool and a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ts encodes t, NULL for the zero time.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// fromTS decodes a nullable timestamp in store precision.
func fromTS(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return store.Micro(*t)
}

// notFound maps pgx.ErrNoRows to store.ErrNotFound naming what.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
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

// where accumulates numbered conditions of a dynamic filter.
type where struct {
	conds []string
	args  []any
}

// add appends "expr" with its placeholder numbered after the previous ones;
// expr holds one %d for the placeholder number.
func (w *where) add(expr string, arg any) {
	w.args = append(w.args, arg)
	w.conds = append(w.conds, fmt.Sprintf(expr, len(w.args)))
}

// sql returns " WHERE a AND b", or "" with no conditions.
func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	out := " WHERE " + w.conds[0]
	for _, c := range w.conds[1:] {
		out += " AND " + c
	}
	return out
}
