package demo

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// TestHealStage runs the heal stage on real Chromium and MemberDesk: the
// renamed label halts and proposes "Look up", the proposal passes both
// batteries, is approved, canaried five times, and a second rename
// reverts ID@active to 1.2.0.
func TestHealStage(t *testing.T) {
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
	br, err := browser.Launch(t.Context(), browser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	cfg := Config{Capabilities: examples, DataDir: t.TempDir()}.withDefaults()
	e := &env{cfg: cfg, lib: lib, base: app.URL(), app: mockapp.NewClient(app.URL(), nil), br: br}
	r := e.healStage(t.Context())
	if !r.Pass {
		t.Fatalf("heal stage: %s", r.Problem)
	}
	for _, want := range []string{`proposed "Look up" for step search`, "5 canary runs passed", "reverted memberdesk.savings_balance@active to 1.2.0"} {
		if !strings.Contains(r.Detail, want) {
			t.Errorf("detail %q lacks %q", r.Detail, want)
		}
	}
}
