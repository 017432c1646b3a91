package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/postgres"
)

// schema6File lists the columns, indexes and constraints a database had
// at schema version 6, as the store's own per-dialect migrations made them
// before the SQL moved into store/sqlstore (commit 042b6c9), one per line
// (see [schemaLines]).
const schema6File = "testdata/schema6.txt"

// TestSchema6Kept migrates a new database and checks that every column,
// index and constraint of schema 6 is there as it was: later migrations
// may add, never change what a database of the old code holds.
func TestSchema6Kept(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := server.Fresh(t)
	db, err := postgres.Open(ctx, dsn, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	got, err := schemaLines(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	body, err := fsx.ReadFile(schema6File, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, l := range got {
		have[l] = true
	}
	want := strings.Split(strings.TrimSpace(string(body)), "\n")
	if len(want) < 50 {
		t.Fatalf("%s: %d lines; want the whole schema 6", schema6File, len(want))
	}
	for _, l := range want {
		if !have[l] {
			t.Errorf("schema 6 had %q; the migrated database does not", l)
		}
	}
}

// schemaLines describes the public schema of the database at dsn: a line
// per column (table, name, type, nullability, default), index and
// constraint, sorted.
func schemaLines(ctx context.Context, dsn string) ([]string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `
		SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' default [' || COALESCE(column_default, '') || ']'
			FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL SELECT 'index ' || indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
		UNION ALL SELECT 'constraint ' || conrelid::regclass::text || '.' || conname || ': ' || pg_get_constraintdef(oid)
			FROM pg_constraint WHERE connamespace = 'public'::regnamespace
		ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("describe schema: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
