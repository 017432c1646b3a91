package capabilitycmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
)

const examples = "../../../examples/capabilities"

// lookup is a draft that types a member number, searches and reads a
// balance; check is the search's postcondition.
func lookup(t *testing.T, check, extra string) string {
	t.Helper()
	text := `schema_version: 1
id: test.lookup
version: 1.0.0
title: Test lookup
surface: web
entrypoint:
  url_pattern: "{base_url}/"
inputs:
  - name: member_id
    type: string
    pattern: "[0-9]{5}"
outputs:
  - name: balance
    type: money
    source: {step: read_balance}
steps:
  - id: enter
    action: type
    target: {role: textbox, name: Member number}
    value: {$input: member_id}
  - id: go
    action: click
    target: {role: button, name: Search}
` + check + `  - id: read_balance
    action: extract
    target: {role: cell, anchor: {relation: row_of, text: Balance}}
    into: balance
    transform: money
` + extra
	path := filepath.Join(t.TempDir(), "lookup.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCap(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	f, out, errOut := cmdutil.TestFactory(nil)
	cmd := NewCmdCapability(f)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestLintUnarmedRead (invariant 23): lint reports a read from a screen
// showing a record with no identity check, at its step and line, and
// exits 1; an armed read, or one that declares identity: unarmed with a
// reason, passes; the reference capabilities pass.
func TestLintUnarmedRead(t *testing.T) {
	t.Parallel()
	unarmed := lookup(t, "", "")
	out, errOut, err := runCap(t, "lint", unarmed)
	if err == nil || !strings.HasPrefix(errOut, "LINT "+unarmed+"  test.lookup@1.0.0  1 lint problem(s)\n") ||
		!strings.Contains(errOut, "lint: "+unarmed+":24: steps[2]: step \"read_balance\" reads output \"balance\"") {
		t.Fatalf("unarmed read: err %v, stdout %q, stderr %q; want it reported at steps[2]", err, out, errOut)
	}
	if _, _, err := runCap(t, "validate", unarmed); err != nil {
		t.Errorf("validate refuses an unarmed read (lint's job): %v", err)
	}
	armed := lookup(t, "    postcondition: {node_exists: {role: heading, name: \"Member {input.member_id}\"}}\n", "")
	if out, errOut, err := runCap(t, "lint", armed); err != nil || !strings.HasPrefix(out, "ok   ") || errOut != "" {
		t.Errorf("armed read: err %v, stdout %q, stderr %q", err, out, errOut)
	}
	declared := lookup(t, "", "identity:\n  unarmed: The balance page names no member.\n")
	out, errOut, err = runCap(t, "lint", declared)
	if err != nil || !strings.Contains(out, "identity unarmed (declared): The balance page names no member.") || errOut != "" {
		t.Errorf("declared unarmed read: err %v, stdout %q, stderr %q", err, out, errOut)
	}
	out, _, err = runCap(t, "lint", "--json", unarmed)
	if err == nil || !strings.Contains(out, `"lint": [`) || !strings.Contains(out, `"path": "steps[2]"`) {
		t.Errorf("--json: err %v, out %s", err, out)
	}
	refs, _ := filepath.Glob(filepath.Join(examples, "*.yaml"))
	if out, errOut, err := runCap(t, append([]string{"lint"}, refs...)...); err != nil || len(refs) < 4 {
		t.Errorf("reference capabilities: err %v\n%s%s", err, out, errOut)
	}
}
