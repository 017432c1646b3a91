package jobs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/jobs"
)

// TestRowsCarryLists: a batch row's list input (a JSON Lines array, or a
// CSV cell holding the JSON) reaches replay as the JSON text it binds.
func TestRowsCarryLists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "rows.jsonl")
	csv := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(jl, []byte(`{"items": ["Alpha", "Gamma (2%)"], "rows": [{"name": "Nuts", "qty": 2}]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csv, []byte("items\n\"[\"\"Alpha\"\",\"\"Gamma (2%)\"\"]\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]map[string]string{
		jl:  {"items": `["Alpha","Gamma (2%)"]`, "rows": `[{"name":"Nuts","qty":2}]`},
		csv: {"items": `["Alpha","Gamma (2%)"]`},
	} {
		rows, err := jobs.ReadRows(path)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows", filepath.Base(path), len(rows))
		}
		for k, v := range want {
			if rows[0].Inputs[k] != v {
				t.Errorf("%s: %s = %q, want %q", filepath.Base(path), k, rows[0].Inputs[k], v)
			}
		}
	}
}
