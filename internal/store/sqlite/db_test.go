package sqlite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlstore"
)

// TestOpenFromEmpty opens a new file in a missing directory twice and checks
// every embedded migration is recorded exactly once and the connection
// settings the concurrency guarantees rest on.
func TestOpenFromEmpty(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sub", "cua.db")
	ms, err := sqlstore.Migrations(sqlstore.SQLite)
	if err != nil || len(ms) == 0 {
		t.Fatalf("embedded migrations: %d, %v", len(ms), err)
	}
	for range 2 {
		db, err := Open(ctx, path, store.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var rows, max int
		if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&rows, &max); err != nil {
			t.Fatal(err)
		}
		if rows != len(ms) || max != len(ms) {
			t.Fatalf("schema_migrations: %d rows, max %d; want %d each", rows, max, len(ms))
		}
		tests := []struct {
			pragma, want string
		}{
			{"journal_mode", "wal"},
			{"foreign_keys", "1"},
			{"busy_timeout", "30000"},
		}
		for _, tt := range tests {
			var got string
			if err := db.db.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got); err != nil || got != tt.want {
				t.Errorf("PRAGMA %s = %q, %v; want %q", tt.pragma, got, err, tt.want)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestForeignKeyEnforced checks an approval cannot name a version that was
// never stored even when inserted directly: the schema, not only the code,
// holds the reference.
func TestForeignKeyEnforced(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "cua.db"), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.db.ExecContext(ctx, `INSERT INTO approvals (id, capability_id, version, content_hash, approver, created_at)
		VALUES ('a', 'ghost', '1.0.0', 'h', 'alice', 0)`)
	if err == nil {
		t.Fatal("insert of an approval of a missing version succeeded; foreign keys are off")
	}
}

// TestOpenPathWithURICharacters opens a data directory whose name holds a
// space and a '#', which the file: DSN must escape, and checks the file is
// created at exactly that path.
func TestOpenPathWithURICharacters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "my data#1", "cua.db")
	db, err := Open(t.Context(), path, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at %s: %v", path, err)
	}
}
