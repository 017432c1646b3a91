package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseInputs(t *testing.T) {
	t.Parallel()
	got, err := ParseInputs([]string{"member_id=12345", "memo=a=b", "empty="})
	if err != nil || got["member_id"] != "12345" || got["memo"] != "a=b" || got["empty"] != "" || len(got) != 3 {
		t.Fatalf("ParseInputs = %v, %v", got, err)
	}
	for in, want := range map[string]string{"noequals": `"noequals": want NAME=VALUE`, "=x": `"=x"`} {
		if _, err := ParseInputs([]string{in}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseInputs(%q) = %v, want %q", in, err, want)
		}
	}
	if _, err := ParseInputs([]string{"a=1", "a=2"}); err == nil || !strings.Contains(err.Error(), "a given twice") {
		t.Errorf("a name given twice: %v", err)
	}
}

func TestLoadApproval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(good, []byte(`{"capability":"x@1.0.0","content_hash":"sha256:ab","approver":"ana"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ap, err := LoadApproval(good)
	if err != nil || ap.ContentHash != "sha256:ab" || ap.Approver != "ana" {
		t.Fatalf("LoadApproval = %+v, %v", ap, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"approver":"ana"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadApproval(bad); err == nil || !strings.Contains(err.Error(), "content_hash") {
		t.Errorf("an approval without content_hash: %v", err)
	}
	if _, err := LoadApproval("/dev/zero"); err == nil {
		t.Error("/dev/zero was read as an approval")
	}
}
