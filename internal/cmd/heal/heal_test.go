package healcmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
)

func run(t *testing.T, dataDir string, args ...string) (string, error) {
	t.Helper()
	f, out, errOut := cmdutil.TestFactory(map[string]string{"CUA_DATA_DIR": dataDir})
	cmd := NewCmdHeal(f)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestBadInvocations: each bad flag or id is refused naming it, and no
// proposal appears.
func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
		flag bool // a usage error (cmdutil.FlagError)
	}{
		{[]string{"approve", "heal-x"}, "--as: required", true},
		{[]string{"approve", "heal-x", "--as", "alice", "--canary", "0"}, "--canary 0", true},
		{[]string{"approve", "heal-x", "--as", "alice"}, "heal proposal heal-x: not found", false},
		{[]string{"reject", "heal-x", "--as", "alice"}, "--reason: required", true},
		{[]string{"rollback", "heal-x"}, "--as: required", true},
		{[]string{"rollback", "heal-x", "--as", "alice"}, "not found", false},
		{[]string{"eval", "heal-x", "--as", "alice", "--base-url", "ftp://x"}, "--base-url", true},
		{[]string{"diff"}, "one proposal ID", true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := run(t, dir, tt.args...)
			var fe *cmdutil.FlagError
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.As(err, &fe) != tt.flag {
				t.Fatalf("err %v (flag error %v), want one naming %q (flag error %v)", err, errors.As(err, &fe), tt.want, tt.flag)
			}
		})
	}
	out, err := run(t, dir, "list")
	if err != nil || !strings.Contains(out, "no heal proposals") {
		t.Fatalf("list after the refusals: %q %v", out, err)
	}
}
