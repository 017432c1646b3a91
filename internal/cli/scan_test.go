package cli

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretsScan(t *testing.T) {
	const canary = "Scan-Canary-9dKq-Vw3x-77"
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("clean.txt", "nothing to see\nhere\n", 0o644)
	write("keys.go", "package x\n\nconst k = \"sk-proj-abcdefghijklmnop1234\"\n", 0o644)
	write("notes/leak.md", "line one\nthe page said SCAN-CANARY-9DKQ-V and more\n", 0o644)
	write("fixtures/fake.txt", "AKIAABCDEFGHIJKLMNOP\n", 0o644)
	write(".git/config", "sk-proj-abcdefghijklmnop1234\n", 0o644)
	write("bin.dat", "\x00\x01sk-proj-abcdefghijklmnop1234", 0o644)
	write("secrets.json", `{"scan_canary":"`+canary+`"}`, 0o600)
	write("allow", "# fixtures\nfixtures/**\nsecrets.json\n", 0o644)

	b := setup(t)
	code := b.run("secrets", "scan", "--secrets", filepath.Join(dir, "secrets.json"), "--allow", filepath.Join(dir, "allow"), dir)
	out := b.out.String() + b.errOut.String()
	if code != 1 {
		t.Fatalf("exit = %d, want 1\n%s", code, out)
	}
	slash := filepath.ToSlash(dir)
	for _, want := range []string{slash + "/keys.go:3: key", slash + "/notes/leak.md:2: literal"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"fixtures/fake.txt", ".git", "bin.dat", "sk-proj", strings.ToUpper(canary[:12]), canary, base64.StdEncoding.EncodeToString([]byte(canary))} {
		if strings.Contains(out, bad) {
			t.Errorf("output mentions %q:\n%s", bad, out)
		}
	}

	clean := setup(t)
	if code := clean.run("secrets", "scan", "--allow", filepath.Join(dir, "allow"), filepath.Join(dir, "clean.txt")); code != 0 {
		t.Errorf("clean file: exit %d\n%s%s", code, clean.out, clean.errOut)
	}
}
