package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/replay"
)

// TestCodegenStage: the stage writes the reference spec under the data
// dir, with the content hash and without a secret, and its detail says how
// to run it; a data dir that cannot be written fails the stage, naming it.
func TestCodegenStage(t *testing.T) {
	t.Parallel()
	lib, err := replay.LoadDir(examples)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e := &env{cfg: Config{DataDir: dir}, lib: lib, base: "http://127.0.0.1:8811"}
	r := e.codegenStage()
	if !r.Pass {
		t.Fatalf("stage failed: %s", r.Problem)
	}
	spec, err := os.ReadFile(filepath.Join(dir, "demo", "lookup.spec.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(spec), "getByRole(") || strings.Contains(string(spec), Password) {
		t.Errorf("spec lacks role locators or holds the password")
	}
	if !strings.Contains(r.Detail, "npx playwright test") {
		t.Errorf("detail does not say how to run the spec: %s", r.Detail)
	}

	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := &env{cfg: Config{DataDir: blocked}, lib: lib, base: "http://127.0.0.1:8811"}
	if r := bad.codegenStage(); r.Pass || !strings.Contains(r.Problem, "codegen") {
		t.Errorf("unwritable data dir: pass=%v problem=%q", r.Pass, r.Problem)
	}
}
