package secret

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/redact"
)

func TestScan(t *testing.T) {
	t.Parallel()
	const canary = "Scan-Canary-9dKq-Vw3x-77"
	dir := t.TempDir()
	for name, body := range map[string]string{
		"keys.go":           "package x\n\nconst k = \"sk-proj-abcdefghijklmnop1234\"\n",
		"notes/leak.md":     "line one\nthe page said SCAN-CANARY-9DKQ-V and more\n",
		"fixtures/fake.txt": "AKIAABCDEFGHIJKLMNOP\n",
		".git/config":       "sk-proj-abcdefghijklmnop1234\n",
		"bin.dat":           "\x00\x01sk-proj-abcdefghijklmnop1234",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := Scan(context.Background(), ScanOptions{Roots: []string{dir}, Canaries: []string{canary}, Allow: []string{"fixtures/**"}},
		func(f Finding) {
			got = append(got, strings.TrimPrefix(f.Path, filepath.ToSlash(dir)+"/")+":"+string(rune('0'+f.Line))+":"+string(f.Kind))
		})
	if err != nil {
		t.Fatal(err)
	}
	want := "keys.go:3:" + string(redact.KindKey) + " notes/leak.md:2:" + string(redact.KindLiteral)
	if strings.Join(got, " ") != want {
		t.Errorf("findings %q, want %q", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Scan(ctx, ScanOptions{Roots: []string{dir}}, func(Finding) {}); err == nil {
		t.Error("a cancelled scan returned no error")
	}
}
