package catalogcmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
)

const examples = "../../../examples/capabilities"

// run runs `cua catalog ARGS` against the data dir and returns stdout.
func run(t *testing.T, dataDir string, args ...string) (string, error) {
	t.Helper()
	f, out, errOut := cmdutil.TestFactory(map[string]string{"CUA_DATA_DIR": dataDir})
	cmd := NewCmdCatalog(f)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestExportTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := run(t, dir, "add", filepath.Join(examples, "memberdesk.savings_balance.yaml"), filepath.Join(examples, "corebank.auth.sign_on.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, dir, "approve", "memberdesk.savings_balance", "--once", "--input", "member_id=12345"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		wantErr string
	}{
		{"openai by default", []string{"export-tools"}, `"function": {`, ""},
		{"anthropic", []string{"export-tools", "--format", "anthropic", "memberdesk.savings_balance"}, `"input_schema": {`, ""},
		{"mcp", []string{"export-tools", "--format=mcp", "memberdesk.savings_balance@1.2.0"}, `"outputSchema": {`, ""},
		{"unapproved ref named", []string{"export-tools", "memberdesk.savings_balance", "corebank.auth.sign_on"}, "", "corebank.auth.sign_on: not approved"},
		{"unknown format", []string{"export-tools", "--format", "gemini"}, "", `--format: format "gemini"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, dir, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || out != "" {
					t.Fatalf("err %v, out %q; want %q and no output", err, out, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var tools []map[string]any
			if err := json.Unmarshal([]byte(out), &tools); err != nil || len(tools) != 1 || !strings.Contains(out, tc.want) {
				t.Fatalf("out %s (%v), want one tool with %s", out, err, tc.want)
			}
			// The one-off approval's exact input narrows the schema.
			if !strings.Contains(out, `"enum"`) {
				t.Errorf("schema not narrowed to the approved input: %s", out)
			}
		})
	}
}
