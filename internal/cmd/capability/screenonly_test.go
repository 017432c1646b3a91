package capabilitycmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withoutEffects writes the reference transfer with every effects block
// taken out (a draft) and returns its path.
func withoutEffects(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(examples, "memberdesk.transfer_funds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	indent, found := -1, false
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		depth := len(line) - len(trimmed)
		if indent >= 0 && (trimmed == "" || depth > indent) {
			continue
		}
		indent = -1
		if strings.HasPrefix(trimmed, "effects:") {
			indent, found = depth, true
			continue
		}
		if !strings.HasPrefix(line, "content_hash:") {
			out = append(out, line)
		}
	}
	if !found {
		t.Fatal("the reference transfer declares no effects block")
	}
	path := filepath.Join(t.TempDir(), "transfer.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLintScreenOnlyWrite (issue 26: contracts are expected): lint reports
// an irreversible write with no effect contract at its last step, naming
// every step of it and the approver's way out, and exits 1; the reference
// transfer, whose confirm step carries a contract, passes; validate leaves
// it to lint.
func TestLintScreenOnlyWrite(t *testing.T) {
	t.Parallel()
	bare := withoutEffects(t)
	out, errOut, err := runCap(t, "lint", bare)
	if err == nil || !strings.HasPrefix(errOut, "LINT "+bare+"  memberdesk.transfer_funds@") ||
		!strings.Contains(errOut, `steps[7]: irreversible steps "submit", "confirm" declares no effect contract`) ||
		!strings.Contains(errOut, "--accept-screen-only REASON") {
		t.Fatalf("screen-only write: err %v, stdout %q, stderr %q; want it reported at steps[7]", err, out, errOut)
	}
	if _, _, err := runCap(t, "validate", bare); err != nil {
		t.Errorf("validate refuses a screen-only write (lint's job): %v", err)
	}
	out, _, err = runCap(t, "lint", "--json", bare)
	if err == nil || !strings.Contains(out, `"path": "steps[7]"`) || !strings.Contains(out, "no effect contract") {
		t.Errorf("--json: err %v, out %s", err, out)
	}
	ref := filepath.Join(examples, "memberdesk.transfer_funds.yaml")
	if out, errOut, err := runCap(t, "lint", ref); err != nil || !strings.HasPrefix(out, "ok   ") || errOut != "" {
		t.Errorf("reference transfer: err %v, stdout %q, stderr %q", err, out, errOut)
	}
}
