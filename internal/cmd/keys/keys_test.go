package keyscmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/evidence/signkey"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(string) string { return "" }}
	cmd := NewCmdKeys(f)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestKeysInitOnceThenExport: init writes the key 0600 in a 0700
// directory and prints its public key; a second init is refused naming the
// file, --force replaces it, and export prints the public key in force.
func TestKeysInitOnceThenExport(t *testing.T) {
	dataDir := t.TempDir()
	pub, err := run(t, "init", "--data-dir", dataDir)
	if err != nil || !strings.HasPrefix(pub, signkey.PublicPrefix) {
		t.Fatalf("init: %q, %v", pub, err)
	}
	p := signkey.Path(dataDir)
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v, %v; want mode 0600", p, fi, err)
	}
	if di, err := os.Stat(filepath.Dir(p)); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("key dir: %v, %v; want mode 0700", di, err)
	}
	before, _ := os.ReadFile(p)
	if _, err := run(t, "init", "--data-dir", dataDir); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second init: err = %v, want a refusal naming %s", err, p)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Fatal("a refused init changed the key")
	}
	if out, err := run(t, "export", "--data-dir", dataDir); err != nil || out != pub {
		t.Fatalf("export = %q, %v; want %q", out, err, pub)
	}
	if bytes.Contains([]byte(pub), before) {
		t.Fatal("init printed the private key")
	}
	forced, err := run(t, "init", "--data-dir", dataDir, "--force")
	if err != nil || forced == pub {
		t.Fatalf("init --force: %q, %v; want a new key", forced, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("replaced key file: %v, %v", fi, err)
	}
	if _, err := run(t, "export", "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "cua keys init") {
		t.Fatalf("export with no key: %v", err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "export", "--data-dir", dataDir); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("export of a key readable by others: %v", err)
	}
}
