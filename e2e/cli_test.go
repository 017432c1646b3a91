package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

type binResult struct {
	code   int
	stdout string
	stderr string
}

func runBin(t *testing.T, env []string, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return binResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestBinaryExitCodes runs the real cua binary: exit 0 for SUCCESS and
// BUSINESS_OUTCOME, 2 for NEEDS_HUMAN, 1 for FAILED (DESIGN invariant 7).
func TestBinaryExitCodes(t *testing.T) {
	t.Parallel()
	creds := []string{"CUA_SECRET_COREBANK_OPERATOR=" + operator, "CUA_SECRET_COREBANK_PASSWORD=" + password}
	capFile := filepath.Join(examples, lookup+".yaml")
	tests := []struct {
		name       string
		variant    string
		member     string
		wantCode   int
		wantStatus domain.RunStatus
		wantFail   domain.FailureCode
		wantOut    string
	}{
		{name: "success", member: "12345", wantCode: 0, wantStatus: domain.StatusSuccess},
		{name: "business outcome", member: "99999", wantCode: 0, wantStatus: domain.StatusBusinessOutcome},
		{name: "needs human", variant: "c", member: "12345", wantCode: 2, wantStatus: domain.StatusNeedsHuman, wantFail: domain.CodeTargetNotFound},
		{name: "input invalid", member: "12 45", wantCode: 1, wantStatus: domain.StatusFailed, wantFail: domain.CodeInputInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, mockapp.Options{Variant: tt.variant})
			r := runBin(t, creds, "replay", capFile, "--input", "member_id="+tt.member, "--base-url", b.app.URL(),
				"--data-dir", b.dataDir, "--json")
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			var rec domain.RunRecord
			if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
				t.Fatalf("--json is not a run record: %v\n%s", err, r.stdout)
			}
			if rec.Status != tt.wantStatus || rec.FailureCode != tt.wantFail || rec.ExitCode != tt.wantCode {
				t.Errorf("record %s/%s exit %d, want %s/%s", rec.Status, rec.FailureCode, rec.ExitCode, tt.wantStatus, tt.wantFail)
			}
			if tt.wantFail == domain.CodeInputInvalid && rec.DispatchCount != 0 {
				t.Errorf("bad input dispatched %d actions", rec.DispatchCount)
			}
			if rec.RunID == "" || rec.ContentHash == "" || rec.Capability != lookup+"@1.2.0" {
				t.Errorf("record lacks identity: %+v", rec)
			}
			if _, err := os.Stat(filepath.Join(b.dataDir, "runs", rec.RunID, "record.json")); err != nil {
				t.Errorf("no record.json: %v", err)
			}
		})
	}
	t.Run("human summary", func(t *testing.T) {
		t.Parallel()
		b := setup(t, mockapp.Options{})
		r := runBin(t, creds, "replay", capFile, "-i", "member_id=12345", "--base-url", b.app.URL(), "--data-dir", b.dataDir)
		for _, want := range []string{"SUCCESS", "savings_balance = 1234.56", "rungs", "drift", "run "} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("summary lacks %q:\n%s", want, r.stdout)
			}
		}
	})
}

// TestBinaryRefusesBadInvocations: every refusal names what is wrong,
// exits 1, starts no browser and changes no file.
func TestBinaryRefusesBadInvocations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	capFile := filepath.Join(examples, lookup+".yaml")
	raw, err := os.ReadFile(capFile)
	if err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(dir, "tampered.yaml")
	os.WriteFile(tampered, bytes.Replace(raw, []byte("name: Member Search"), []byte("name: Member Searches"), 1), 0o644)
	draft := filepath.Join(dir, "draft.yaml")
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(l, "content_hash:") {
			lines = append(lines, l)
		}
	}
	os.WriteFile(draft, []byte(strings.Join(lines, "\n")), 0o644)
	loose := filepath.Join(dir, "secrets.json")
	os.WriteFile(loose, []byte(`{"corebank_password":"x"}`), 0o644)

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"tampered capability", []string{"replay", tampered, "-i", "member_id=12345"}, "content hash mismatch for memberdesk.savings_balance@1.2.0: declared sha256:"},
		{"draft capability", []string{"replay", draft, "-i", "member_id=12345"}, "is a draft"},
		{"missing file", []string{"replay", filepath.Join(dir, "nope.yaml")}, "no such file"},
		{"input without =", []string{"replay", capFile, "-i", "member_id"}, "--input \"member_id\": want NAME=VALUE"},
		{"bad base url", []string{"replay", capFile, "-i", "member_id=12345", "--base-url", "ftp://x"}, "--base-url"},
		{"loose secrets file", []string{"replay", capFile, "-i", "member_id=12345", "--secrets", loose}, "readable by others"},
		{"unknown gate", []string{"replay", capFile, "--release-gate", "nope"}, "--release-gate \"nope\""},
		{"unknown flag", []string{"replay", capFile, "--colour"}, "unknown flag: --colour"},
		{"no capability", []string{"replay"}, "expected one capability FILE or catalog ID[@VERSION]"},
		{"mockapp bad variant", []string{"mockapp", "--variant", "z"}, "--variant \"z\""},
		{"validate tampered", []string{"capability", "validate", tampered}, "content hash mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := snapshotDir(t, dir)
			r := runBin(t, []string{"CUA_DATA_DIR=" + filepath.Join(dir, "data")}, tt.args...)
			if r.code != 1 {
				t.Errorf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, r.stderr)
			}
			if after := snapshotDir(t, dir); after != before {
				t.Errorf("a refused command changed files:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		data, _ := os.ReadFile(path)
		b.WriteString(path + ":" + string(rune(len(data))) + ";")
		return nil
	})
	return b.String()
}
