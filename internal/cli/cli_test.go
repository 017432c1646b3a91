package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/receipt"
)

const examples = "../../examples/capabilities"

type testBundle struct {
	io     *IOStreams
	out    *bytes.Buffer
	errOut *bytes.Buffer
	env    map[string]string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &testBundle{io: &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, out: out, errOut: errOut, env: map[string]string{}}
}

func (b *testBundle) factory() *Factory {
	return &Factory{IO: b.io, Getenv: func(k string) string { return b.env[k] }}
}

func (b *testBundle) run(args ...string) int {
	root := NewRootCmd(b.factory())
	root.SetArgs(args)
	root.SetOut(b.io.Out)
	root.SetErr(b.io.ErrOut)
	return exitCode(root.ExecuteContext(context.Background()), b.io.ErrOut)
}

func TestVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if code := b.run("version", "--json"); code != 0 {
		t.Fatalf("exit %d: %s", code, b.errOut)
	}
	var v map[string]any
	if err := json.Unmarshal(b.out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v["schema_version"] != float64(cmdutil.JSONSchemaVersion) || v["version"] == "" {
		t.Errorf("version JSON %v", v)
	}
	b = setup(t)
	if code := b.run("version", "extra"); code != 1 || !strings.Contains(b.errOut.String(), "expected no arguments") {
		t.Errorf("version with an argument: exit %d, %s", code, b.errOut)
	}
}

// cua profile prints a profile the published schema accepts, for each
// host kind, and refuses an unknown one naming --host.
func TestProfile(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"", receipt.HostBrowser, receipt.HostState, receipt.HostDesktop} {
		b := setup(t)
		args := []string{"profile"}
		if host != "" {
			args = append(args, "--host", host)
		}
		if code := b.run(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, b.errOut)
		}
		if err := receipt.Validate(receipt.KindProfile, b.out.Bytes()); err != nil {
			t.Errorf("%v: %v", args, err)
		}
		var p receipt.Profile
		if err := json.Unmarshal(b.out.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if want := cmp.Or(host, receipt.HostBrowser); p.HostKind != want {
			t.Errorf("%v: host_kind %q, want %q", args, p.HostKind, want)
		}
	}
	b := setup(t)
	if code := b.run("profile", "--host", "mainframe"); code != 1 || !strings.Contains(b.errOut.String(), `--host "mainframe"`) || b.out.Len() != 0 {
		t.Errorf("unknown host: exit %d, out %q, err %q", code, b.out, b.errOut)
	}
}

func TestCapabilityCommands(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(examples, "*.yaml"))
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "validate references", args: append([]string{"capability", "validate"}, files...), wantOut: "sealed sha256:"},
		{name: "validate invalid", args: []string{"capability", "validate", "../capability/testdata/invalid/missing_role.yaml"},
			wantCode: 1, wantErr: "missing_role.yaml:24: steps[1].target.role: required field is missing"},
		{name: "validate nothing", args: []string{"capability", "validate"}, wantCode: 1, wantErr: "expected at least one FILE"},
		{name: "validate json", args: []string{"capability", "validate", "--json", "../capability/testdata/invalid/bad_regex.yaml"},
			wantCode: 1, wantOut: `"path": "inputs[0].pattern"`},
		{name: "hash", args: []string{"capability", "hash", filepath.Join(examples, "memberdesk.savings_balance.yaml")}, wantOut: "sha256:"},
		{name: "hash two files", args: []string{"capability", "hash", "a", "b"}, wantCode: 1, wantErr: "expected one FILE"},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 1, wantErr: "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			code := b.run(tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nout: %s\nerr: %s", code, tt.wantCode, b.out, b.errOut)
			}
			if !strings.Contains(b.out.String(), tt.wantOut) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantOut, b.out)
			}
			if !strings.Contains(b.errOut.String(), tt.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantErr, b.errOut)
			}
		})
	}
}

func TestSealCommand(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../capability/testdata/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "draft.yaml")
	os.WriteFile(path, raw, 0o644)
	b := setup(t)
	if code := b.run("capability", "seal", "--json", path); code != 0 {
		t.Fatalf("seal exit %d: %s", code, b.errOut)
	}
	var res struct {
		ContentHash string `json:"content_hash"`
	}
	json.Unmarshal(b.out.Bytes(), &res)
	b2 := setup(t)
	b2.run("capability", "hash", path)
	if strings.TrimSpace(b2.out.String()) != res.ContentHash || res.ContentHash == "" {
		t.Errorf("hash after seal %q, seal said %q", b2.out, res.ContentHash)
	}
}
