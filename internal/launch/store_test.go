package launch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDataDir(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, flag, env, want string }{
		{name: "flag wins", flag: "d", env: "e", want: "d"},
		{name: "environment", env: "e", want: "e"},
		{name: "default", want: ".cua"},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == "CUA_DATA_DIR" {
				return tt.env
			}
			return ""
		}
		if got := DataDir(tt.flag, getenv); got != tt.want {
			t.Errorf("%s: DataDir = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCatalogOpensSQLiteUnderDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"CUA_DATA_DIR": dir, "USER": "carol"}
	cat, st, err := Catalog(t.Context(), StoreOptions{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if vs, err := cat.List(t.Context(), ""); err != nil || len(vs) != 0 {
		t.Fatalf("empty catalog: %v, %v", vs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cua.db")); err != nil {
		t.Fatalf("store not under the data dir: %v", err)
	}
}

func TestCatalogRefusesANonPostgresDB(t *testing.T) {
	t.Parallel()
	for _, o := range []StoreOptions{
		{DB: "mysql://h/db", Getenv: func(string) string { return "" }},
		{Getenv: func(k string) string { return map[string]string{"CUA_DB": "cua.db"}[k] }},
	} {
		if _, _, err := Catalog(t.Context(), o); !errors.Is(err, ErrDBSpec) {
			t.Errorf("%+v: err = %v, want ErrDBSpec", o.DB, err)
		}
	}
}
