package demo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cuahq/cua/internal/codegen"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/surface/browser"
)

// codegenStage writes the reference lookup as a Playwright Test spec under
// <data-dir>/demo/ and says how to run it. It checks what can be checked
// without Node: the spec was written, names the capability's content hash,
// and holds neither sign-on secret (they are read from the environment when
// the spec runs). The spec running green is internal/codegen's test.
func (e *env) codegenStage() *Result {
	r := &Result{Stage: Stage{Name: "codegen writes the lookup as a Playwright spec", Capability: lookupCap, WantDispatches: -1}}
	l, err := e.lib.Lookup(lookupCap)
	if err != nil {
		return r.fail("%v", err)
	}
	path := filepath.Join(e.cfg.DataDir, "demo", "lookup.spec.ts")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return r.fail("codegen: %v", err)
	}
	hint, err := codegen.WriteReference(l, e.lib, browser.Flags(), path, e.base)
	if err != nil {
		return r.fail("codegen: %v", err)
	}
	spec, err := fsx.ReadFile(path, fsx.MaxRecord)
	if err != nil {
		return r.fail("read the spec: %v", err)
	}
	for _, s := range []string{Operator, Password} {
		if bytes.Contains(spec, []byte(s)) {
			return r.fail("the spec %s holds a sign-on secret", path)
		}
	}
	if !bytes.Contains(spec, []byte(l.Hash)) {
		return r.fail("the spec %s does not name the capability's content hash %s", path, l.Hash)
	}
	r.Pass = true
	r.Detail = fmt.Sprintf("wrote %s (%d bytes); %s", path, len(spec), hint)
	return r
}
