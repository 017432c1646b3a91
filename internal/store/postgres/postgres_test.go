package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/pgtest"
	"github.com/cuahq/cua/internal/store/postgres"
	"github.com/cuahq/cua/internal/store/sqlstore"
	"github.com/cuahq/cua/internal/store/storetest"
)

// server is the package's one private PostgreSQL, started by TestMain.
var server *pgtest.Server

var harness = storetest.Harness{
	Fresh: func(tb testing.TB) string { return server.Fresh(tb) },
	Open: func(ctx context.Context, addr string, cfg store.Config) (store.Store, error) {
		return postgres.Open(ctx, addr, cfg)
	},
}

func TestMain(m *testing.M) {
	storetest.HelperMain(harness) // a helper process connects to its parent's server
	s, err := pgtest.Start(context.Background())
	if err != nil {
		// No skip: without PostgreSQL the suite fails.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server = s
	code := m.Run()
	s.Stop()
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	storetest.Run(t, harness)
}

// TestMigrationsFromEmpty opens a new database twice, the second time
// concurrently from two handles, and checks each migration is applied once.
func TestMigrationsFromEmpty(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := server.Fresh(t)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			db, err := postgres.Open(ctx, dsn, store.Config{})
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent open of an empty database: %v", err)
		}
	}
	db, err := postgres.Open(ctx, dsn, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms, err := sqlstore.Migrations(sqlstore.Postgres)
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations: %d, %v", len(ms), err)
	}
	if v, err := db.SchemaVersion(ctx); err != nil || v != len(ms) {
		t.Fatalf("SchemaVersion = %d, %v; want %d (the newest migration)", v, err, len(ms))
	}
}
