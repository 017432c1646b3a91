package catalogcmd

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// runAs runs `cua catalog ARGS` with token as CUA_PRINCIPAL_TOKEN.
func runAs(t *testing.T, dataDir, token string, args ...string) (string, error) {
	t.Helper()
	f, out, errOut := cmdutil.TestFactory(map[string]string{"CUA_DATA_DIR": dataDir, cmdutil.PrincipalTokenEnv: token})
	cmd := NewCmdCatalog(f)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// principals adds an operator and an approver to the SQLite file under
// dataDir and returns their tokens.
func principals(t *testing.T, dataDir string) (operator, approver string) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(dataDir, "cua.db"), store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := principal.NewDirectory(st, nil)
	by := principal.Principal{Name: "root@host"}
	if operator, err = d.Add(t.Context(), by, "olga", principal.Operator); err != nil {
		t.Fatal(err)
	}
	if approver, err = d.Add(t.Context(), by, "bob", principal.Approver); err != nil {
		t.Fatal(err)
	}
	return operator, approver
}

// TestApproveAsPrincipal: an operator's token cannot approve or revoke; an
// approver's token approves and revokes, and catalog show names them; a
// bad token is an error naming CUA_PRINCIPAL_TOKEN and changes nothing;
// without a token the OS user approves, marked unverified.
func TestApproveAsPrincipal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := run(t, dir, "add", filepath.Join(examples, "memberdesk.savings_balance.yaml"), filepath.Join(examples, "corebank.auth.sign_on.yaml")); err != nil {
		t.Fatal(err)
	}
	operator, approver := principals(t, dir)
	approve := []string{"approve", "memberdesk.savings_balance", "--once", "--input", "member_id=12345"}
	if _, err := runAs(t, dir, operator, approve...); !errors.Is(err, principal.ErrForbidden) ||
		!strings.Contains(err.Error(), "approver or admin") || !strings.Contains(err.Error(), "olga is operator") {
		t.Fatalf("approve as an operator: %v, want forbidden naming the roles needed", err)
	}
	bad := "cuap_bob_" + strings.Repeat("0", 64)
	for _, tok := range []string{bad, "not-a-token"} {
		if _, err := runAs(t, dir, tok, approve...); err == nil || !strings.Contains(err.Error(), "CUA_PRINCIPAL_TOKEN") ||
			!errors.Is(err, principal.ErrBadToken) {
			t.Fatalf("approve with token %q: %v, want an error naming CUA_PRINCIPAL_TOKEN", tok, err)
		}
	}
	if out, _ := run(t, dir, "show", "memberdesk.savings_balance"); !strings.Contains(out, "approvals (0)") {
		t.Fatalf("a refused approve wrote an approval:\n%s", out)
	}
	out, err := runAs(t, dir, approver, approve...)
	if err != nil || !strings.Contains(out, " by bob: ") {
		t.Fatalf("approve as bob: %q, %v", out, err)
	}
	_, rest, _ := strings.Cut(out, " as ")
	id, _, _ := strings.Cut(rest, " ")
	if _, err := runAs(t, dir, operator, "revoke", id); !errors.Is(err, principal.ErrForbidden) {
		t.Fatalf("revoke as an operator: %v, want forbidden", err)
	}
	if _, err := runAs(t, dir, bad, "revoke", id); err == nil || !strings.Contains(err.Error(), "CUA_PRINCIPAL_TOKEN") {
		t.Fatalf("revoke with a bad token: %v", err)
	}
	if show, _ := run(t, dir, "show", "memberdesk.savings_balance"); !strings.Contains(show, id+"  active  by bob ") {
		t.Fatalf("a refused revoke changed the approval:\n%s", show)
	}
	if out, err := runAs(t, dir, approver, "revoke", id); err != nil || !strings.HasSuffix(out, " by bob\n") {
		t.Fatalf("revoke as bob: %q, %v", out, err)
	}
	if out, err := run(t, dir, approve...); err != nil || !strings.Contains(out, " (unverified): ") {
		t.Fatalf("approve without a token: %q, %v; want the OS user, unverified", out, err)
	}
	show, err := run(t, dir, "show", "memberdesk.savings_balance")
	if err != nil || !strings.Contains(show, "by bob  by bob at") || !strings.Contains(show, "(unverified) at") {
		t.Fatalf("show does not name who approved and revoked:\n%s%v", show, err)
	}
}
