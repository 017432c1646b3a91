package launch

import (
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/postgres"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// StoreOptions locate the store.
type StoreOptions struct {
	// DB is a postgres:// (or postgresql://) URL; empty means $CUA_DB, and
	// when that is empty too, SQLite at <DataDir>/cua.db.
	DB string
	// DataDir is the data directory (see [DataDir]).
	DataDir string
	// Getenv reads CUA_DB, CUA_DATA_DIR and USER (injected: launch never
	// reads the environment itself).
	Getenv func(string) string
}

// ErrDBSpec marks a DB that is neither empty nor a PostgreSQL URL.
var ErrDBSpec = errors.New("want a postgres:// URL (or none for SQLite under --data-dir)")

// DataDir is dir, else $CUA_DATA_DIR, else ".cua".
func DataDir(dir string, getenv func(string) string) string {
	if dir == "" {
		dir = getenv("CUA_DATA_DIR")
	}
	if dir == "" {
		dir = ".cua"
	}
	return dir
}

// Catalog opens the store o locates and the catalog over it, whose default
// approver is the OS user (else $USER). Close the store after use. A DB
// that is not a PostgreSQL URL is [ErrDBSpec], before anything opens.
func Catalog(ctx context.Context, o StoreOptions) (*catalog.Catalog, store.Store, error) {
	db := o.DB
	if db == "" {
		db = o.Getenv("CUA_DB")
	}
	var st store.Store
	var err error
	switch {
	case strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://"):
		st, err = postgres.Open(ctx, db, store.Config{})
	case db != "":
		return nil, nil, ErrDBSpec
	default:
		st, err = sqlite.Open(ctx, filepath.Join(DataDir(o.DataDir, o.Getenv), "cua.db"), store.Config{})
	}
	if err != nil {
		return nil, nil, err
	}
	// Whoever calls without a principal of their own is the OS user,
	// unverified: never a bare name that reads as a verified principal.
	cat, err := catalog.New(catalog.Config{Store: st, User: func() string {
		name := o.Getenv("USER")
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		host, _ := os.Hostname()
		return principal.Principal{Name: principal.CleanOSUser(name, host)}.String()
	}})
	if err != nil {
		_ = st.Close()
	}
	return cat, st, err
}
