package recordcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
)

// TestRecordRefusesBadFlags: every bad flag is refused naming it, before
// anything opens (no browser, no store, no --out directory).
func TestRecordRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "caps")
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	good := []string{"--target", "http://127.0.0.1:8811", "--goal", "Look up a member", "--out", out, "--data-dir", dir}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "http://127.0.0.1:8811", "--out", out}, "--goal"},
		{[]string{"--goal", "g", "--out", out}, "--target"},
		{[]string{"--target", "http://127.0.0.1:8811", "--goal", "g"}, "--out"},
		{append(good[2:], "--target", "ftp://x"), "--target"},
		{append(good, "--listen", "0.0.0.0:8813"), "--listen"},
		{append(good, "--listen", "nope"), "--listen"},
		{append(good, "--input", "member_id"), "--input"},
		{append(good, "--input", "Member=1"), "--input Member"},
		{append(good, "--input", "a=1", "--input", "b=1"), "same value"},
		{append(good, "--secret", "Password=Bad-Ref"), "--secret"},
		{append(good, "--id", "lookup"), "--id"},
		{append(good, "--version", "1.0"), "--version"},
		{[]string{"--target", "http://127.0.0.1:8811", "--goal", "g", "--out", file}, "--out"},
		{append(good, "--secrets", filepath.Join(dir, "missing.json")), "--secrets"},
	} {
		f, _, _ := cmdutil.TestFactory(map[string]string{})
		cmd := NewCmdRecord(f, func(context.Context, *recordOptions) error {
			t.Errorf("%v: ran", c.args)
			return nil
		})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetArgs(c.args)
		err := cmd.ExecuteContext(t.Context())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
		if _, ok := err.(*cmdutil.FlagError); err != nil && !ok {
			t.Errorf("%v: %T is no flag error (exit code 2)", c.args, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("refused runs left %d entries in the data directory, want only the test's file", len(entries))
	}
}
