package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
)

// mainRun runs Main with args against the process environment.
func mainRun(args ...string) (code int, out, errOut string) {
	var o, e bytes.Buffer
	code = Main(context.Background(), args, &IOStreams{In: strings.NewReader(""), Out: &o, ErrOut: &e})
	return code, o.String(), e.String()
}

// TestPrincipalTokenFromEnvironment: Main takes CUA_PRINCIPAL_TOKEN out of
// the environment (no child inherits it) or reads the file
// CUA_PRINCIPAL_TOKEN_FILE names, and commands act as that principal; a
// bad token or an unreadable file is an error naming the variable.
func TestPrincipalTokenFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CUA_DATA_DIR", dir)
	t.Setenv(cmdutil.PrincipalTokenEnv, "")
	os.Unsetenv(cmdutil.PrincipalTokenEnv)
	t.Setenv(cmdutil.PrincipalTokenFileEnv, "")
	code, ada, errOut := mainRun("users", "add", "ada", "--role", "admin")
	if code != 0 || !strings.HasPrefix(ada, "cuap_ada_") || !strings.Contains(errOut, "shown once") {
		t.Fatalf("bootstrap add: exit %d, %q, %s", code, ada, errOut)
	}
	file := filepath.Join(dir, "ada.token")
	if err := os.WriteFile(file, []byte(ada), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(cmdutil.PrincipalTokenFileEnv, file)
	if code, out, errOut := mainRun("users", "add", "bob", "--role", "approver"); code != 0 || !strings.HasPrefix(out, "cuap_bob_") {
		t.Fatalf("add as ada through the token file: exit %d, %q, %s", code, out, errOut)
	}
	if code, out, _ := mainRun("users", "list"); code != 0 || !strings.Contains(out, "approver") || !strings.Contains(out, " ada ") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	// The variable wins over the file, and leaves the environment.
	t.Setenv(cmdutil.PrincipalTokenEnv, "cuap_ada_"+strings.Repeat("0", 64))
	code, out, errOut := mainRun("users", "add", "carl", "--role", "operator")
	if code != 1 || out != "" || !strings.Contains(errOut, "CUA_PRINCIPAL_TOKEN: bad principal token") {
		t.Fatalf("a wrong token: exit %d, %q, %s; want an error naming CUA_PRINCIPAL_TOKEN", code, out, errOut)
	}
	if v, ok := os.LookupEnv(cmdutil.PrincipalTokenEnv); ok {
		t.Fatalf("CUA_PRINCIPAL_TOKEN is still in the environment: %q", v)
	}
	for _, bad := range []string{filepath.Join(dir, "absent"), dir} {
		t.Setenv(cmdutil.PrincipalTokenFileEnv, bad)
		code, _, errOut := mainRun("users", "add", "carl", "--role", "operator")
		if code != 1 || !strings.Contains(errOut, "CUA_PRINCIPAL_TOKEN_FILE") {
			t.Fatalf("token file %s: exit %d, %s; want an error naming CUA_PRINCIPAL_TOKEN_FILE", bad, code, errOut)
		}
	}
	if code, out, _ := mainRun("users", "list"); code != 0 || strings.Contains(out, "carl") {
		t.Fatalf("a refused add added carl:\n%s", out)
	}
}
