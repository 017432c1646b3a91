package demo

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
)

// The agent stages against a MemberDesk and a Chromium of their own: the
// tool list, typed outputs, and the business outcome, each checked through
// its run's evidence.
func TestMCPStages(t *testing.T) {
	t.Parallel()
	cfg := Config{Capabilities: examples, DataDir: t.TempDir()}.withDefaults()
	lib, err := replay.LoadDir(examples)
	if err != nil {
		t.Fatal(err)
	}
	app, err := mockapp.New(mockapp.Options{Operator: Operator, Password: Password})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Open(); err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	br, err := browser.Launch(t.Context(), browser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	e := &env{cfg: cfg, lib: lib, base: app.URL(), app: mockapp.NewClient(app.URL(), nil), br: br}
	rs := e.mcpStages(t.Context())
	for _, r := range rs {
		t.Logf("%s %s %d ms: %s", r.Mark(), r.Name, r.DurationMS(), r.Detail)
	}
	if len(rs) != 3 {
		t.Fatalf("%d stages, want 3", len(rs))
	}
	for i, want := range []string{"tools [memberdesk_savings_balance]", `"savings_balance":"1234.56"`, `"outcome":"member_not_found"`} {
		if !rs[i].Pass || !strings.Contains(rs[i].Detail, want) {
			t.Errorf("stage %d %q: pass=%v detail %q, want %q", i+1, rs[i].Name, rs[i].Pass, rs[i].Detail, want)
		}
	}
	if rs[1].Record == nil || rs[1].Record.DispatchCount == 0 || !strings.Contains(rs[1].Detail, "progress notifications") {
		t.Errorf("the lookup's record %+v", rs[1].Record)
	}
}
