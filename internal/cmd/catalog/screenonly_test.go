package catalogcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
)

// screenOnlyTransfer writes the reference transfer as version 1.9.3 with
// every effects block taken out, sealed, and returns its path.
func screenOnlyTransfer(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(examples, "memberdesk.transfer_funds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	indent := -1
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		depth := len(line) - len(trimmed)
		if indent >= 0 && (trimmed == "" || depth > indent) {
			continue
		}
		indent = -1
		switch {
		case strings.HasPrefix(trimmed, "effects:"):
			indent = depth
			continue
		case strings.HasPrefix(line, "content_hash:"):
			continue
		case strings.HasPrefix(line, "version:"):
			line = "version: 1.9.3"
		}
		out = append(out, line)
	}
	path := filepath.Join(t.TempDir(), "transfer.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestApproveScreenOnlyFlag (issue 26: contracts are expected): `cua
// catalog approve` refuses a transfer whose irreversible steps declare no
// effect contract, naming the flag, and writes nothing; --accept-screen-only
// REASON approves it and catalog show prints the reason in the note; the
// flag on the reference transfer, which has a contract, is refused.
func TestApproveScreenOnlyFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := []string{"corebank.auth.sign_on.yaml", "memberdesk.transfer_history.yaml", "memberdesk.transfer_funds.yaml"}
	for i, f := range files {
		files[i] = filepath.Join(examples, f)
	}
	if _, err := run(t, dir, append([]string{"add", screenOnlyTransfer(t)}, files...)...); err != nil {
		t.Fatal(err)
	}
	once := []string{"--once", "-i", "member_id=12345", "-i", "from_account=Savings", "-i", "to_account=Checking", "-i", "amount=25.00"}
	_, err := run(t, dir, append([]string{"approve", "memberdesk.transfer_funds@1.9.3"}, once...)...)
	if err == nil || !strings.Contains(err.Error(), `irreversible steps "submit", "confirm"`) || !strings.Contains(err.Error(), "--accept-screen-only") {
		t.Fatalf("approve of a screen-only write: %v, want refused naming the steps and the flag", err)
	}
	if show, _ := run(t, dir, "show", "memberdesk.transfer_funds@1.9.3"); !strings.Contains(show, "approvals (0)") {
		t.Fatalf("a refused approve wrote an approval:\n%s", show)
	}
	if _, err := run(t, dir, append([]string{"approve", "memberdesk.transfer_funds@1.9.3", "--accept-screen-only", "legacy tenant, no history screen", "--note", "ticket 9"}, once...)...); err != nil {
		t.Fatalf("approve --accept-screen-only: %v", err)
	}
	show, err := run(t, dir, "show", "memberdesk.transfer_funds@1.9.3")
	if err != nil || !strings.Contains(show, "ticket 9; effects screen-only: accepted: legacy tenant, no history screen") {
		t.Fatalf("show does not record the acceptance (%v):\n%s", err, show)
	}
	_, err = run(t, dir, append([]string{"approve", "memberdesk.transfer_funds@1.3.0", "--accept-screen-only", "just in case"}, once...)...)
	if err == nil || !strings.Contains(err.Error(), "nothing to accept") {
		t.Errorf("--accept-screen-only on the contracted reference: %v, want refused", err)
	}
}
