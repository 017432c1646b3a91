package observecmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
)

// TestStoreDir: a file:// store is served where it is (RUN must be in
// it); a bad URL or a RUN that is not a run id is a FlagError naming the
// flag or argument, before anything is served.
func TestStoreDir(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	if err := os.MkdirAll(filepath.Join(store, "r1"), 0o700); err != nil {
		t.Fatal(err)
	}
	o := &observeOptions{All: true, Evidence: "file://" + store, Env: func(string) string { return "" }, DataDir: t.TempDir()}
	dir, only, stop, err := storeDir(context.Background(), o)
	if err != nil || dir != store || only != "" {
		t.Fatalf("storeDir = %q %q %v, want %q", dir, only, err, store)
	}
	stop()
	o.All, o.Run = false, "r1"
	if dir, only, _, err = storeDir(context.Background(), o); err != nil || dir != store || only != "r1" {
		t.Fatalf("storeDir RUN r1 = %q %q %v", dir, only, err)
	}
	for _, tt := range []struct{ url, run, want string }{
		{"ftp://x", "", "--evidence"},
		{"s3://", "", "--evidence"},
		{"file://" + store, "../r1", `RUN "../r1"`},
		{"file://" + store, "r2", `RUN "r2": no such run`},
	} {
		o := &observeOptions{All: tt.run == "", Run: tt.run, Evidence: tt.url, Env: func(string) string { return "" }, DataDir: t.TempDir()}
		_, _, _, err := storeDir(context.Background(), o)
		var fe *cmdutil.FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("storeDir(%s, %q) = %v, want a FlagError naming %s", tt.url, tt.run, err, tt.want)
		}
	}
}
