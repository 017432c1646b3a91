package exec_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/model/exec"
	"github.com/cuahq/cua/internal/model/modeltest"
)

// TestEnvironmentAllowlist runs a program that dumps its environment to a
// file: it holds the allowlist and the passed-through name, and no
// CUA_SECRET_* and no other variable of this process. Mutation killed:
// Decide leaving cmd.Env nil (os.Environ()).
func TestEnvironmentAllowlist(t *testing.T) {
	const canary = "canary-Zq8vP2mW7xKt4nB"
	t.Setenv("CUA_SECRET_EXEC_CANARY", canary)
	t.Setenv("CUA_TEST_UNLISTED", "unlisted-value")
	t.Setenv("CUA_TEST_PASSED", "passed-value")
	t.Setenv(exec.PassEnvVar, "CUA_TEST_PASSED, CUA_SECRET_EXEC_CANARY")
	dump := filepath.Join(t.TempDir(), "env.txt")
	m := exec.New("/bin/sh", "-c", `env > "$0"; printf '{"action":"done","reason":"x"}'`, dump)
	if _, err := m.Decide(context.Background(), modeltest.NewRequest()); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), canary) {
		t.Fatalf("the program's environment holds the secret:\n%s", raw)
	}
	allowed := append(slices.Clone(exec.BaseEnv), "CUA_TEST_PASSED", "PWD", "SHLVL", "_", "OLDPWD")
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		name, _, _ := strings.Cut(line, "=")
		names = append(names, name)
		if !slices.Contains(allowed, name) {
			t.Errorf("variable %s is not on the allowlist", name)
		}
	}
	if !slices.Contains(names, "CUA_TEST_PASSED") || !slices.Contains(names, "PATH") {
		t.Errorf("environment %v lacks PATH or the passed-through CUA_TEST_PASSED", names)
	}
}

func TestAllowedEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"PATH": "/bin", "HOME": "/h", "X": "1", "CUA_SECRET_A": "s"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got := exec.AllowedEnv(lookup, exec.ParsePassEnv(" X ,,cua_secret_a,CUA_SECRET_A,MISSING"))
	want := []string{"PATH=/bin", "HOME=/h", "X=1"}
	if !slices.Equal(got, want) {
		t.Errorf("AllowedEnv = %v, want %v", got, want)
	}
}
