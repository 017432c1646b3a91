package demo

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/replay"
)

// TestTakeoverStage runs the takeover stage on the real binary: a `cua
// worker --park` parks the transfer, a `cua console` in another process
// relays it, alice in Chromium finishes it; the ledger holds one entry.
func TestTakeoverStage(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cua")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cua").CombinedOutput(); err != nil {
		t.Fatalf("build cua: %v\n%s", err, out)
	}
	app, err := mockapp.New(mockapp.Options{Addr: "127.0.0.1:0", Operator: Operator, Password: Password})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	lib, err := replay.LoadDir(examples)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{cfg: Config{Capabilities: examples, DataDir: t.TempDir(), Bin: bin}, lib: lib, base: app.URL(), app: mockapp.NewClient(app.URL(), nil)}
	r := e.takeoverStage(t.Context())
	if !r.Pass {
		t.Fatalf("takeover stage: %s", r.Problem)
	}
	t.Log(r.Detail)
}
