// Package sqlite is the embedded adapter of the store port: one SQLite file
// (the default is <data-dir>/cua.db) through modernc.org/sqlite, pure Go, no
// cgo. It opens the file in WAL mode with a busy timeout and foreign keys on,
// starts every write with BEGIN IMMEDIATE (so concurrent writers, in this
// process or another, queue instead of failing), and hands the handle to
// store/sqlstore, which holds the queries and migrations of both adapters,
// with its SQLite dialect.
//
// It owns the SQLite connection and nothing else: it must never compute a
// content hash, judge an approval's bounds, read a clock other than
// [store.Config.Now], or import another adapter.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlstore"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// busyTimeout is how long a writer waits for another writer's lock.
const busyTimeout = 30 * time.Second

// DB is a store backed by one SQLite file. Safe for concurrent use.
type DB struct {
	*sqlstore.DB
	db *sql.DB // the handle sqlstore owns, for this package's tests
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
	s, err := sqlstore.Open(ctx, sdb, sqlstore.SQLite, cfg)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return &DB{DB: s, db: sdb}, nil
}
