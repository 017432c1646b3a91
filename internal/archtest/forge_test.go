package archtest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthorizedActionCannotBeForged builds testdata/forge, a package
// outside policy that writes a policy.AuthorizedAction literal with its
// fields set, and wants the compiler to refuse it (invariant 2: only
// policy makes an AuthorizedAction). Mutation killed: exporting the
// token's fields (Valid, Action, Risk…), after which the fixture compiles.
func TestAuthorizedActionCannotBeForged(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	cmd := exec.Command(goBin, "build", "-o", filepath.Join(t.TempDir(), "forge"), "./internal/archtest/testdata/forge")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("testdata/forge compiled: a package other than policy can make a policy.AuthorizedAction")
	}
	for _, field := range []string{"valid", "action", "risk"} {
		want := "cannot refer to unexported field " + field + " in struct literal of type policy.AuthorizedAction"
		if !strings.Contains(string(out), want) {
			t.Errorf("compile error lacks %q:\n%s", want, out)
		}
	}
}
