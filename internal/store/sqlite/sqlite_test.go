package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/store/storetest"
)

var harness = storetest.Harness{
	Fresh: func(tb testing.TB) string { return filepath.Join(tb.TempDir(), "cua.db") },
	Open: func(ctx context.Context, addr string, cfg store.Config) (store.Store, error) {
		return sqlite.Open(ctx, addr, cfg)
	},
}

func TestMain(m *testing.M) {
	storetest.HelperMain(harness)
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) {
	storetest.Run(t, harness)
}
