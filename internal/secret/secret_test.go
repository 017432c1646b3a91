package secret

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSecretsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"corebank_password":"from-file"}`), 0o600)
	loose := filepath.Join(dir, "loose.json")
	os.WriteFile(loose, []byte(`{"x":"y"}`), 0o640)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`["x"]`), 0o600)
	s, err := NewStore(func(k string) string {
		if k == "CUA_SECRET_COREBANK_OPERATOR" {
			return "from-env"
		}
		return ""
	}, good)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Secret("corebank_password"); v != "from-file" {
		t.Errorf("file secret %q", v)
	}
	if v, _ := s.Secret("corebank_operator"); v != "from-env" {
		t.Errorf("env secret %q", v)
	}
	if _, err := s.Secret("missing"); err == nil || !strings.Contains(err.Error(), "CUA_SECRET_MISSING") {
		t.Errorf("missing secret: %v", err)
	}
	if got, want := s.Names([]string{"CUA_SECRET_COREBANK_OPERATOR=x", "CUA_SECRET_=y", "HOME=/root"}), []string{"corebank_operator", "corebank_password"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if got := s.Values(); !slices.Equal(got, []string{"from-file"}) {
		t.Errorf("Values = %q, want the file's value", got)
	}
	if _, err := LoadFile(loose); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("loose file: %v", err)
	}
	if _, err := NewStore(os.Getenv, bad); err == nil {
		t.Error("a JSON array was accepted")
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	globs := []string{"internal/redact/*_test.go", "testdata/**", "*.pem"}
	for p, want := range map[string]bool{
		"./internal/redact/pattern_test.go": true,
		"internal/redact/pattern.go":        false,
		"testdata/a/b/c.txt":                true,
		"x/testdata/c.txt":                  false,
		"key.pem":                           true,
		"dir/key.pem":                       false,
	} {
		if got := Allowed(globs, p); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", p, got, want)
		}
	}
}
