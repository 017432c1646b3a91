package sqlite

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/store"
)

// TestOpenDataModes: a store opened fresh, in a new data directory or in one
// that already exists as 0755 holding a 0644 cua.db, keeps cua.db and its
// WAL 0600 and the directory 0700 (invariant 22).
func TestOpenDataModes(t *testing.T) {
	t.Parallel()
	for _, pre := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), ".cua")
		path := filepath.Join(dir, "cua.db")
		if pre {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		db, err := Open(t.Context(), path, store.Config{})
		if err != nil {
			t.Fatal(err)
		}
		// A write makes sure the WAL exists while the database is open.
		if _, err := db.db.ExecContext(t.Context(), `CREATE TABLE IF NOT EXISTS mode_probe (x INTEGER)`); err != nil {
			t.Fatal(err)
		}
		for f, want := range map[string]fs.FileMode{dir: 0o700, path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600} {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatalf("pre-existing %v: %v", pre, err)
			}
			if st.Mode().Perm() != want {
				t.Errorf("pre-existing %v: %s has mode %v, want %v", pre, filepath.Base(f), st.Mode().Perm(), want)
			}
		}
		db.Close()
	}
}
