package codegen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/codegen"
)

// TestFramesWithoutTitlesAreFoundByName: every reference capability
// generates with no frame title at all; each frame its scopes name is
// found by that name, and a titled frame still by its title.
func TestFramesWithoutTitlesAreFoundByName(t *testing.T) {
	t.Parallel()
	lib := exampleLibrary(t)
	files, err := filepath.Glob("../../examples/capabilities/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example capabilities: %v", err)
	}
	for _, file := range files {
		spec, err := codegen.Generate(mustLoad(t, file), codegen.Options{Library: lib})
		if err != nil {
			t.Errorf("%s without --frame-title: %v", filepath.Base(file), err)
			continue
		}
		checkSafe(t, filepath.Base(file), spec)
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(text), "frame: content") && !strings.Contains(string(spec), `const contentFrame = frameNamed(page, "content");`) {
			t.Errorf("%s: the content frame is not found by its name", filepath.Base(file))
		}
	}
	spec, err := codegen.Generate(loadExample(t, "memberdesk.savings_balance"), codegen.Options{Library: lib, FrameTitles: map[string]string{"nav": "Navigation"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`const navFrame = frame(page, "Navigation");`, `const contentFrame = frameNamed(page, "content");`} {
		if !strings.Contains(string(spec), want) {
			t.Errorf("with nav's title only, the spec lacks %s", want)
		}
	}
}
