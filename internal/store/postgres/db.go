// Package postgres is the fleet adapter of the store port: the same schema
// as store/sqlite on PostgreSQL, for many processes on many machines
// (`--db postgres://…` or CUA_DB). It connects through pgx's database/sql
// driver (pgx/v5/stdlib), sized as a pgxpool would be by the same DSN, and
// hands the handle to store/sqlstore, which holds the queries and
// migrations of both adapters, with its PostgreSQL dialect: READ COMMITTED
// writes whose contested steps are conditional statements or SELECT … FOR
// UPDATE, and migrations under an advisory lock.
//
// It owns the PostgreSQL connection and nothing else: it must never
// compute a content hash, judge an approval's bounds, read a clock other
// than [store.Config.Now], or import another adapter.
package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlstore"
)

// DB is a store backed by a PostgreSQL database. Safe for concurrent use.
type DB struct {
	*sqlstore.DB
}

var _ store.Store = (*DB)(nil)

// Open connects to the database at dsn (a postgres:// URL or a key=value
// string, pool_* settings included) and migrates it to the latest schema.
func Open(ctx context.Context, dsn string, cfg store.Config) (*DB, error) {
	if dsn == "" {
		return nil, fmt.Errorf("open postgres: dsn is required: %w", store.ErrInvalid)
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	sdb := stdlib.OpenDB(*pc.ConnConfig)
	sdb.SetMaxOpenConns(int(pc.MaxConns))
	sdb.SetMaxIdleConns(int(pc.MaxConns))
	sdb.SetConnMaxLifetime(pc.MaxConnLifetime)
	sdb.SetConnMaxIdleTime(pc.MaxConnIdleTime)
	s, err := sqlstore.Open(ctx, sdb, sqlstore.Postgres, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return &DB{DB: s}, nil
}
