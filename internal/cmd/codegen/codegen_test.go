package codegencmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/codegen"
	"github.com/cuahq/cua/internal/domain"
)

const examples = "../../../examples/capabilities"

// TestCodegenFlags checks flag parsing and validation apart from writing.
func TestCodegenFlags(t *testing.T) {
	t.Parallel()
	capFile := filepath.Join(examples, "memberdesk.savings_balance.yaml")
	frames := []string{"--frame-title", "nav=Navigation", "--frame-title", "content=Workspace"}
	cases := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(cases, []byte(`[{"name": "found", "inputs": {"member_id": "12345"}}, {"name": "gone", "inputs": {"member_id": "99999"}, "expect": "member_not_found"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *codegenOptions)
	}{
		{name: "defaults", args: append([]string{capFile, "--out", "x.spec.ts"}, frames...), check: func(t *testing.T, o *codegenOptions) {
			if o.Gen.BaseURL != codegen.DefaultBaseURL || o.Gen.Browser != codegen.DefaultBrowser || o.Gen.Library == nil || len(o.Gen.BrowserArgs) == 0 ||
				o.Gen.FrameTitles["content"] != "Workspace" || len(o.Gen.Cases) != 0 {
				t.Errorf("defaults: %+v", o.Gen)
			}
		}},
		{name: "cases from flags", args: append([]string{capFile, "--out", "x.spec.ts", "--case", "member_id=12345", "--case", "member_id=99999,_expect=member_not_found,_name=gone"}, frames...), check: func(t *testing.T, o *codegenOptions) {
			if len(o.Gen.Cases) != 2 || o.Gen.Cases[1].Name != "gone" || o.Gen.Cases[1].Expect != "member_not_found" || o.Gen.Cases[1].Inputs["member_id"] != "99999" {
				t.Errorf("cases: %+v", o.Gen.Cases)
			}
		}},
		{name: "cases file", args: []string{capFile, "--out", "x.spec.ts", "--cases", cases}, check: func(t *testing.T, o *codegenOptions) {
			if len(o.Gen.Cases) != 2 || o.Gen.Cases[1].Expect != "member_not_found" {
				t.Errorf("cases: %+v", o.Gen.Cases)
			}
		}},
		{name: "no out", args: []string{capFile}, wantErr: "--out is required"},
		{name: "out not typescript", args: []string{capFile, "--out", "x.js"}, wantErr: "want a TypeScript file"},
		{name: "both case forms", args: []string{capFile, "--out", "x.spec.ts", "--case", "member_id=1", "--cases", cases}, wantErr: "one or the other"},
		{name: "case not a pair", args: []string{capFile, "--out", "x.spec.ts", "--case", "member_id"}, wantErr: "is not NAME=VALUE"},
		{name: "case input twice", args: []string{capFile, "--out", "x.spec.ts", "--case", "member_id=1,member_id=2"}, wantErr: "given twice"},
		{name: "frame title not a pair", args: []string{capFile, "--out", "x.spec.ts", "--frame-title", "nav"}, wantErr: "--frame-title"},
		{name: "bad base url", args: []string{capFile, "--out", "x.spec.ts", "--base-url", "ftp://x"}, wantErr: "--base-url"},
		{name: "missing file", args: []string{"nope/missing.yaml", "--out", "x.spec.ts"}, wantErr: "missing.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, out, errOut := cmdutil.TestFactory(nil)
			var got *codegenOptions
			cmd := NewCmdCodegen(f, func(_ context.Context, o *codegenOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(out)
			cmd.SetErr(errOut)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.ExecuteContext(t.Context())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if got != nil {
					t.Fatal("runF called after a validation error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}

// TestCodegenWrites runs the command end to end with no --frame-title (the
// frames are found by the names the capability's scopes use): the spec is
// written, the summary and the run hint are printed, and a refused case
// writes nothing.
func TestCodegenWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "lookup.spec.ts")
	f, stdout, _ := cmdutil.TestFactory(nil)
	cmd := NewCmdCodegen(f, nil)
	cmd.SetArgs([]string{filepath.Join(examples, "memberdesk.savings_balance.yaml"), "--out", out, "--case", "member_id=12345"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(spec), `getByRole("link", { name: "Member Search", exact: true })`) {
		t.Errorf("spec lacks the role locator of open_search")
	}
	if !strings.Contains(string(spec), `const navFrame = frameNamed(page, "nav");`) {
		t.Errorf("spec does not find the nav frame by its name")
	}
	if s := stdout.String(); !strings.Contains(s, "wrote "+out) || !strings.Contains(s, "run it with:") || !strings.Contains(s, "CUA_SECRET_COREBANK_PASSWORD=") {
		t.Errorf("stdout %q", s)
	}

	refused := filepath.Join(dir, "refused.spec.ts")
	f, _, _ = cmdutil.TestFactory(nil)
	cmd = NewCmdCodegen(f, nil)
	cmd.SetArgs([]string{filepath.Join(examples, "memberdesk.savings_balance.yaml"), "--out", refused, "--case", "member_id=abc"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), "member_id") {
		t.Fatalf("err %v, want a refusal naming member_id", err)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Errorf("a refused spec was written: %v", err)
	}
}

// TestCodegenNamesGuardedSteps: for a capability with gated and
// irreversible steps, cua codegen prints one line per such step on stderr,
// naming the variable that releases it, and the spec's header says the
// same; a lookup with none prints nothing there. The steps are read from
// the example, not assumed.
func TestCodegenNamesGuardedSteps(t *testing.T) {
	t.Parallel()
	file := filepath.Join(examples, "memberdesk.transfer_funds.yaml")
	l, err := capability.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, st := range l.Capability.Steps {
		var unless []string
		if st.Gate {
			unless = append(unless, "CUA_RELEASE_GATE names "+st.ID)
		}
		if st.Risk == domain.RiskIrreversible {
			unless = append(unless, "CUA_ALLOW_IRREVERSIBLE=1")
		}
		if len(unless) > 0 {
			want = append(want, "step "+st.ID+" ("+string(st.Risk)+map[bool]string{true: ", gated"}[st.Gate]+"): the test stops before it, failing, unless "+strings.Join(unless, " and "))
		}
	}
	if len(want) < 2 {
		t.Fatalf("%s: want a gated step and an irreversible one, have %v", file, want)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "transfer.spec.ts")
	f, stdout, stderr := cmdutil.TestFactory(nil)
	cmd := NewCmdCodegen(f, nil)
	cmd.SetArgs([]string{file, "--out", out, "--frame-title", "nav=Navigation", "--frame-title", "content=Workspace"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("stderr has %d lines, want %d (one per gated or irreversible step):\n%s", len(lines), len(want), stderr.String())
	}
	spec, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if lines[i] != "codegen: "+w {
			t.Errorf("stderr line %d = %q, want %q", i+1, lines[i], "codegen: "+w)
		}
		if !strings.Contains(string(spec), "\n//   "+w+"\n") {
			t.Errorf("the spec's header lacks %q", w)
		}
	}
	if !strings.Contains(stdout.String(), "wrote "+out) {
		t.Errorf("stdout %q", stdout.String())
	}

	f, _, stderr = cmdutil.TestFactory(nil)
	cmd = NewCmdCodegen(f, nil)
	cmd.SetArgs([]string{filepath.Join(examples, "memberdesk.savings_balance.yaml"), "--out", filepath.Join(dir, "lookup.spec.ts"), "--frame-title", "nav=Navigation", "--frame-title", "content=Workspace"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() != 0 {
		t.Errorf("a lookup with no guarded step printed on stderr: %q", stderr.String())
	}
}
