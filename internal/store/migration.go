package store

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one versioned schema change of an adapter's dialect.
type Migration struct {
	// Version is the NNN prefix of the file name; versions start at 1 and
	// have no gaps.
	Version int
	// Name is the file name without prefix and extension.
	Name string
	// SQL is the file's content, applied in one transaction.
	SQL string
}

// Migrations reads the files NNN_name.sql in dir of fsys, sorted by
// version. A file not named so, a duplicate or a gap is an error, so a
// mistake in a migration set fails every test of its adapter.
func Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if e.IsDir() || !strings.HasSuffix(name, ".sql") || !ok || err != nil || v < 1 || rest == "" {
			return nil, fmt.Errorf("migration %s: name is not NNN_name.sql", name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: rest, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %03d_%s: expected version %d (duplicate or gap)", m.Version, m.Name, i+1)
		}
	}
	return out, nil
}
