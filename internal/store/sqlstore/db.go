// Package sqlstore is the one implementation of the store port over
// database/sql that store/sqlite and store/postgres share: every query,
// scan and migration is written here once, with $1…$n parameters, and a
// [Dialect] supplies what differs (the parameter form, column types, how a
// time is encoded, row locks, the migration lock), as River's drivers do.
//
// Writes are single transactions whose contested steps are conditional
// statements (INSERT … ON CONFLICT DO NOTHING, UPDATE … WHERE <still
// free>) or a SELECT that locks its row, so concurrent writers in one
// process or many never lose an update. Migrations are the embedded
// migrations/NNN_name.sql, text/template files filled with the dialect's
// [Types], applied one transaction each and recorded in schema_migrations.
//
// It owns the SQL of the schema and nothing else: it never opens a
// connection (the adapters do), computes a content hash, judges an
// approval's bounds, or reads a clock other than [store.Config.Now].
package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"text/template"
	"time"

	"github.com/cuahq/cua/internal/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// DB is a store over one database/sql handle. Safe for concurrent use.
type DB struct {
	db  *sql.DB
	d   *Dialect
	cfg store.Config
	now func() time.Time
}

var _ store.Store = (*DB)(nil)

// Open takes over db, which speaks dialect d, and migrates it to the
// latest schema; on error it closes db. Close the returned DB, not db.
func Open(ctx context.Context, db *sql.DB, d Dialect, cfg store.Config) (*DB, error) {
	s := &DB{db: db, d: &d, cfg: cfg, now: cfg.Clock()}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database handle.
func (s *DB) Close() error { return s.db.Close() }

// SchemaVersion returns the highest applied migration version.
func (s *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.q().row(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// Migrations returns the embedded migrations filled in for dialect d.
func Migrations(d Dialect) ([]store.Migration, error) {
	ms, err := store.Migrations(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		name := fmt.Sprintf("%03d_%s", m.Version, m.Name)
		tpl, err := template.New(name).Option("missingkey=error").Parse(m.SQL)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		var b bytes.Buffer
		if err := tpl.Execute(&b, d.Types); err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		ms[i].SQL = b.String()
	}
	return ms, nil
}

// migrate applies, each in its own transaction, the migrations newer than
// the recorded version.
func (s *DB) migrate(ctx context.Context) error {
	ms, err := Migrations(*s.d)
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := s.write(ctx, "migrate", func(tx conn) error {
			if s.d.MigrationLock != "" {
				if _, err := tx.exec(ctx, s.d.MigrationLock); err != nil {
					return err
				}
			}
			if _, err := tx.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
				version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at `+s.d.Types.Time+` NOT NULL)`); err != nil {
				return err
			}
			var n int
			if err := tx.row(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.c.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, s.ts(s.now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %03d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// write runs fn in one transaction and commits it, calling the
// BeforeCommit hook with op first.
func (s *DB) write(ctx context.Context, op string, fn func(tx conn) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", op, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if err := fn(conn{c: tx, d: s.d}); err != nil {
		return err
	}
	s.cfg.Hook(op)
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", op, err)
	}
	return nil
}

// q returns the handle for reads outside a transaction.
func (s *DB) q() conn { return conn{c: s.db, d: s.d} }

// conn is a *sql.DB or *sql.Tx whose queries, written with $n parameters,
// are rebound to the dialect.
type conn struct {
	c interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
	d *Dialect
}

func (c conn) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return c.c.ExecContext(ctx, c.d.rebind(q), args...)
}

// execN runs q and returns how many rows it changed.
func (c conn) execN(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := c.exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// insert runs q, an INSERT … ON CONFLICT DO NOTHING of the record what
// names; a row already there is [store.ErrExists].
func (c conn) insert(ctx context.Context, what, q string, args ...any) error {
	n, err := c.execN(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrExists)
	}
	return nil
}

func (c conn) row(ctx context.Context, q string, args ...any) *sql.Row {
	return c.c.QueryRowContext(ctx, c.d.rebind(q), args...)
}

// list runs q and returns each row as scan reads it; what names the list
// in errors.
func list[T any](ctx context.Context, c conn, what string, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := c.c.QueryContext(ctx, c.d.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return out, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// ts encodes t for the dialect, NULL for the zero time.
func (s *DB) ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return s.d.Time(store.Micro(t))
}

// nullTime scans a nullable time in either encoding: unix microseconds
// (SQLite) or a timestamp (PostgreSQL), in store precision.
type nullTime struct{ t time.Time }

// Scan implements sql.Scanner.
func (n *nullTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		n.t = time.Time{}
	case int64:
		n.t = time.UnixMicro(v).UTC()
	case time.Time:
		n.t = store.Micro(v)
	default:
		return fmt.Errorf("time column holds %T", src)
	}
	return nil
}

// nullJSON stores an absent JSON document as NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// bytesOf returns a nullable text column's bytes, nil for NULL.
func bytesOf(s sql.NullString) []byte {
	if !s.Valid {
		return nil
	}
	return []byte(s.String)
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

// where accumulates the conditions of a dynamic filter, numbering their
// parameters.
type where struct {
	conds []string
	args  []any
}

// add appends expr with its parameter numbered after the previous ones;
// expr holds one %d for the number.
func (w *where) add(expr string, arg any) {
	w.args = append(w.args, arg)
	w.conds = append(w.conds, fmt.Sprintf(expr, len(w.args)))
}

// eq adds "col = $n" when val is not empty.
func (w *where) eq(col, val string) {
	if val != "" {
		w.add(col+" = $%d", val)
	}
}

// sql returns " WHERE a AND b", or "" with no conditions.
func (w *where) sql() string {
	out := ""
	for i, c := range w.conds {
		if i == 0 {
			out = " WHERE " + c
		} else {
			out += " AND " + c
		}
	}
	return out
}
