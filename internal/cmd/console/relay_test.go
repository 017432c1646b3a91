package consolecmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// TestRelayAuthenticator: over a real SQLite store's principals, only the
// relay principal's token is the relay credential, acting for another
// active principal: an operator's own token, garbage, the relay principal
// acting for itself, a name nobody holds and a disabled operator are
// refused.
func TestRelayAuthenticator(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cua.db"), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir, by := principal.NewDirectory(db, nil), principal.Principal{Name: "test@host"}
	tokens := map[string]string{}
	for _, name := range []string{DefaultRelayPrincipal, "alice", "bob"} {
		if tokens[name], err = dir.Add(ctx, by, name, principal.Operator); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.DisablePrincipal(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	auth := RelayAuthenticator(db, DefaultRelayPrincipal)
	if who, err := auth.AuthenticateRelay(ctx, tokens[DefaultRelayPrincipal], "alice"); err != nil || who.Name != "alice" || who.Role != "operator" {
		t.Fatalf("the relay credential acting for alice: %+v %v", who, err)
	}
	for name, c := range map[string][2]string{
		"alice's own token":      {tokens["alice"], "alice"},
		"garbage":                {"cuap_console-relay_" + strings.Repeat("0", 64), "alice"},
		"the relay as itself":    {tokens[DefaultRelayPrincipal], DefaultRelayPrincipal},
		"an unknown operator":    {tokens[DefaultRelayPrincipal], "mallory"},
		"a disabled operator":    {tokens[DefaultRelayPrincipal], "bob"},
		"a token of no one here": {"not-a-token", "alice"},
	} {
		if who, err := auth.AuthenticateRelay(ctx, c[0], c[1]); err == nil {
			t.Errorf("%s: accepted as %+v", name, who)
		}
	}
}

// TestRelayFlagsRefuse: bad relay and credential flags are refused naming
// the flag before anything opens.
func TestRelayFlagsRefuse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty, notToken := filepath.Join(dir, "empty"), filepath.Join(dir, "bad")
	_ = os.WriteFile(empty, nil, 0o600)
	_ = os.WriteFile(notToken, []byte("hunter2\n"), 0o600)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--relay-token-file", empty}, "--relay-token-file " + empty + ": empty"},
		{[]string{"--relay-token-file", notToken}, "not a principal token"},
		{[]string{"--relay-token-file", filepath.Join(dir, "absent")}, "--relay-token-file: "},
	} {
		f, _, _ := cmdutil.TestFactory(nil)
		ran := false
		cmd := NewCmdConsole(f, func(context.Context, *consoleOptions) error { ran = true; return nil })
		if err := run(t, cmd, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) || ran {
			t.Errorf("%v: %v (ran %v), want %q", tt.args, err, ran, tt.want)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--park", "--park-timeout", "0s"}, "--park-timeout 0s"},
		{[]string{"--park", "--relay-principal", "Not A Name"}, "--relay-principal"},
		{[]string{"--park", "--relay", "0.0.0.0:0"}, "--relay: "},
		{[]string{"--park", "--relay-url", "ftp://x"}, "--relay-url"},
	} {
		cmd := &cobra.Command{Use: "worker", SilenceUsage: true, SilenceErrors: true}
		var r RelayFlags
		BindRelay(cmd, &r)
		cmd.RunE = func(*cobra.Command, []string) error { return r.Validate() }
		if err := run(t, cmd, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
}

func run(t *testing.T, cmd *cobra.Command, args []string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.ExecuteContext(t.Context())
}
