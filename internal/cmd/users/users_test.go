package userscmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/principal"
)

// result is one run of `cua users ...`.
type result struct {
	out, errOut string
	err         error
}

// users runs `cua users ARGS` on the command tree against the SQLite file
// under dataDir, with token as CUA_PRINCIPAL_TOKEN ("" for none).
func users(t *testing.T, dataDir, token string, args ...string) result {
	t.Helper()
	env := map[string]string{"CUA_DATA_DIR": dataDir}
	if token != "" {
		env[cmdutil.PrincipalTokenEnv] = token
	}
	f, out, errOut := cmdutil.TestFactory(env)
	cmd := NewCmdUsers(f)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return result{out: out.String(), errOut: errOut.String(), err: err}
}

// mustToken runs a command that prints a token and returns it.
func mustToken(t *testing.T, dataDir, token string, args ...string) string {
	t.Helper()
	r := users(t, dataDir, token, args...)
	tok := strings.TrimSpace(r.out)
	if r.err != nil || !strings.HasPrefix(tok, "cuap_"+args[1]+"_") || strings.Count(r.out, "\n") != 1 ||
		!strings.Contains(r.errOut, "shown once") {
		t.Fatalf("users %v: out %q, stderr %q, err %v; want the token alone on stdout and a note on stderr", args, r.out, r.errOut, r.err)
	}
	return tok
}

func TestUsersLifecycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := users(t, dir, "", "list"); r.err != nil || !strings.Contains(r.out, "no principals") {
		t.Fatalf("list of none: %+v", r)
	}
	// Bootstrap: no admin yet, the OS user adds the first one.
	ada := mustToken(t, dir, "", "add", "ada", "--role", "admin")
	if r := users(t, dir, "", "add", "bob", "--role", "approver"); !errors.Is(r.err, principal.ErrForbidden) || !strings.Contains(r.err.Error(), "admin") {
		t.Fatalf("add without a token once an admin exists: %v, want forbidden naming admin", r.err)
	}
	bob := mustToken(t, dir, ada, "add", "bob", "--role", "approver")
	if r := users(t, dir, bob, "add", "carl", "--role", "operator"); !errors.Is(r.err, principal.ErrForbidden) {
		t.Fatalf("an approver adding: %v, want forbidden", r.err)
	}
	r := users(t, dir, "", "list")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.err != nil || len(lines) != 3 || !strings.Contains(lines[0], "NAME") ||
		!strings.Contains(lines[1], "ada") || !strings.Contains(lines[1], "(unverified)") || !strings.HasSuffix(lines[1], "active") ||
		!strings.Contains(lines[2], "bob") || !strings.Contains(lines[2], "approver") || !strings.HasSuffix(lines[2], "active") ||
		!strings.Contains(lines[2], " ada ") {
		t.Fatalf("list:\n%s%v", r.out, r.err)
	}
	if strings.Contains(r.out, "argon2") || strings.Contains(r.out, ada[11:]) {
		t.Fatalf("list shows a hash or a secret:\n%s", r.out)
	}
	newBob := mustToken(t, dir, ada, "rotate", "bob")
	if r := users(t, dir, bob, "list"); r.err != nil {
		t.Fatalf("list ignores the token: %v", r.err)
	}
	if r := users(t, dir, bob, "rotate", "bob"); !errors.Is(r.err, principal.ErrBadToken) || !strings.Contains(r.err.Error(), "CUA_PRINCIPAL_TOKEN") {
		t.Fatalf("bob's old token after rotate: %v, want a bad token naming CUA_PRINCIPAL_TOKEN", r.err)
	}
	if r := users(t, dir, ada, "disable", "bob"); r.err != nil || r.out != "disabled bob\n" {
		t.Fatalf("disable: %+v", r)
	}
	if r := users(t, dir, newBob, "rotate", "ada"); !errors.Is(r.err, principal.ErrDisabled) {
		t.Fatalf("disabled bob's token: %v, want ErrDisabled", r.err)
	}
	if r := users(t, dir, "", "list"); !strings.Contains(r.out, "disabled") {
		t.Fatalf("list after disable:\n%s", r.out)
	}
}

func TestUsersLockedAndRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ada := mustToken(t, dir, "", "add", "ada", "--role", "admin")
	wrong := ada[:len(ada)-4] + "0000"
	if wrong == ada {
		wrong = ada[:len(ada)-4] + "1111"
	}
	for range principal.MaxFailures {
		if r := users(t, dir, wrong, "disable", "ada"); !errors.Is(r.err, principal.ErrBadToken) {
			t.Fatalf("wrong token: %v", r.err)
		}
	}
	r := users(t, dir, ada, "rotate", "ada")
	if !errors.Is(r.err, principal.ErrLocked) || r.out != "" {
		t.Fatalf("right token after %d wrong ones: %+v, want locked", principal.MaxFailures, r)
	}
	if r := users(t, dir, "", "list"); !strings.Contains(r.out, "locked until ") {
		t.Fatalf("list does not show the lock:\n%s", r.out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "Alice", "--role", "operator"}, "NAME: principal name \"Alice\""},
		{[]string{"add", "a\nb", "--role", "operator"}, `"a\nb"`},
		{[]string{"add", "x\x1b[31m", "--role", "operator"}, `"x\x1b[31m"`},
		{[]string{"add", strings.Repeat("a", 41), "--role", "operator"}, "^[a-z][a-z0-9.-]{0,39}$"},
		{[]string{"add", "carl"}, "--role"},
		{[]string{"add", "carl", "--role", "boss"}, `--role: role "boss"`},
		{[]string{"disable"}, "one NAME"},
		{[]string{"disable", "nobody"}, "nobody"},
	} {
		r := users(t, dir, "", tc.args...)
		var fe *cmdutil.FlagError
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) || strings.ContainsAny(r.err.Error(), "\n\x1b") {
			t.Errorf("users %q: err %v, want an error naming %q (escaped)", tc.args, r.err, tc.want)
		} else if tc.want != "nobody" && !errors.As(r.err, &fe) {
			t.Errorf("users %q: %v is not a usage error", tc.args, r.err)
		}
	}
	if r := users(t, dir, "", "list"); strings.Count(r.out, "\n") != 2 {
		t.Fatalf("a refused command added a principal:\n%s", r.out)
	}
}
