package replay_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/sim"
)

// signOn is a sealed sign-on for the signOnApp flow; version 1.0.1 clicks
// another button, so the flow shows which version ran.
const signOn = `schema_version: 1
id: test.sign_on
version: 1.0.0
title: Sign on
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: safe
steps:
  - id: sign_on
    action: click
    target: {role: button, name: Sign on}
    postcondition:
      node_exists: {role: heading, name: Member Search}
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 5
  max_duration_ms: 10000
`

// signOn101 is the sign-on's next version, added to the library later.
var signOn101 = strings.NewReplacer("version: 1.0.0", "version: 1.0.1", "name: Sign on}", "name: Sign on now}").Replace(signOn)

// signOnApp serves a sign-on screen (either button signs on) in front of
// a member search and its details table, as lookupApp does.
func signOnApp() *sim.Flow {
	f := sim.NewFlow(base,
		sim.Screen{Name: "signon", Title: "Sign on", Nodes: []sim.Node{
			{Role: "heading", Name: "Sign on"},
			{Role: "button", Name: "Sign on"},
			{Role: "button", Name: "Sign on now"},
		}},
		sim.Screen{Name: "search", Title: "Member Search", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Search"},
			{Role: "textbox", Name: "Member number"},
			{Role: "button", Name: "Search"},
		}},
		sim.Screen{Name: "details", Title: "Member Details", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Details"},
			{Role: "cell", Name: "Active", Row: "Status"},
			{Role: "cell", Name: "$1,234.56", Row: "Savings Balance"},
			{Role: "cell", Name: "11/30/2026", Row: "As of"},
		}},
	)
	f.On("button", "Sign on", sim.Goto("search"))
	f.On("button", "Sign on now", sim.Goto("search"))
	f.On("button", "Search", sim.Goto("details"))
	return f
}

// prerequisite is the lookup's edit that makes it sign on first, calling
// ref pinned to pin (no pin when pin is empty).
func prerequisite(ref, pin string) []string {
	p := "prerequisites:\n  - capability: " + ref + "\n"
	if pin != "" {
		p += "    content_hash: " + pin + "\n"
	}
	p += "    when:\n      node_exists: {role: button, name: Sign on}\n"
	return []string{"risk: safe\nsteps:", "risk: safe\n" + p + "steps:"}
}

// TestPinnedPrerequisite: a sealed root runs exactly the sub-capability it
// pins, whatever other versions sit beside it in the library directory (a
// bare id would take the newest); a bare id, an edited sub-capability or a
// pin to content the library does not hold is refused before the surface is
// touched.
func TestPinnedPrerequisite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v100 := sealText(t, dir, "sign_on.yaml", signOn)
	v101 := sealText(t, dir, "sign_on-1.0.1.yaml", signOn101)
	lib, err := replay.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// An edited copy of 1.0.0: sealed, then changed by hand.
	editedDir := t.TempDir()
	edited := sealText(t, editedDir, "sign_on.yaml", signOn)
	text, err := os.ReadFile(edited.File)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edited.File, []byte(strings.Replace(string(text), "title: Sign on", "title: Sign on, edited", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	editedLib, err := replay.LoadDir(editedDir)
	if err != nil {
		t.Fatal(err)
	}
	editedHash := sealText(t, t.TempDir(), "x.yaml", strings.Replace(signOn, "title: Sign on", "title: Sign on, edited", 1)).Hash

	tests := []struct {
		name    string
		edits   []string
		lib     replay.Library
		clicked string // the sign-on button the run clicked
		hash    string // the content hash the run records for the sign-on
		wantErr []string
	}{
		{name: "pinned 1.0.0 with 1.0.1 beside it", edits: prerequisite("test.sign_on@1.0.0", v100.Hash), lib: lib,
			clicked: "Sign on", hash: v100.Hash},
		{name: "pinned 1.0.1", edits: prerequisite("test.sign_on@1.0.1", v101.Hash), lib: lib,
			clicked: "Sign on now", hash: v101.Hash},
		{name: "bare id", edits: prerequisite("test.sign_on", ""), lib: lib,
			wantErr: []string{`prerequisites[0].capability: "test.sign_on" is not pinned: want id@version with content_hash`}},
		{name: "id@version without content_hash", edits: prerequisite("test.sign_on@1.0.0", ""), lib: lib,
			wantErr: []string{`prerequisites[0].capability: "test.sign_on@1.0.0" is not pinned`}},
		{name: "a pin to another version's content", edits: prerequisite("test.sign_on@1.0.0", v101.Hash), lib: lib,
			wantErr: []string{"test.sign_on@1.0.0 is pinned to " + v101.Hash + ", but " + v101.File + " holds that content as test.sign_on@1.0.1"}},
		{name: "an edited sub-capability", edits: prerequisite("test.sign_on@1.0.0", v100.Hash), lib: editedLib,
			wantErr: []string{"prerequisites[0].capability", edited.File, v100.Hash, editedHash, "edited after it was sealed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, spec{cap: "lookup.yaml", edits: tt.edits, app: signOnApp, inputs: member("12345")})
			b.opts.Library = tt.lib
			perr := replay.Preflight(b.loaded, tt.lib)
			rec := b.run(t)
			if len(tt.wantErr) > 0 {
				checkRefused(t, b, rec, perr, tt.wantErr)
				return
			}
			if perr != nil || rec.Status != domain.StatusSuccess {
				t.Fatalf("preflight %v; run %s (%s: %s), want SUCCESS", perr, rec.Status, rec.FailureCode, rec.Message)
			}
			for _, name := range []string{"Sign on", "Sign on now"} {
				want := 0
				if name == tt.clicked {
					want = 1
				}
				if n := b.flow.Count("button", name); n != want {
					t.Errorf("%q clicked %d times, want %d", name, n, want)
				}
			}
			if got := startedHashes(t, b); len(got) != 1 || got[0] != tt.hash {
				t.Errorf("capability_started content hashes %v, want [%s]", got, tt.hash)
			}
		})
	}
}

// checkRefused checks that the preflight and the run refused with an error
// saying each of want, before the app saw any action.
func checkRefused(t *testing.T, b *testBundle, rec *domain.RunRecord, perr error, want []string) {
	t.Helper()
	if perr == nil {
		t.Fatal("Preflight accepted the capability")
	}
	for _, w := range want {
		if !strings.Contains(perr.Error(), w) {
			t.Errorf("preflight error %q does not say %q", perr, w)
		}
	}
	if rec.Status != domain.StatusFailed || rec.DispatchCount != 0 || len(b.flow.Handled()) != 0 {
		t.Errorf("run %s with %d dispatches and %d app actions, want FAILED with none", rec.Status, rec.DispatchCount, len(b.flow.Handled()))
	}
}

// startedHashes lists the content hashes of the capabilities the run
// started in place, from its event log.
func startedHashes(t *testing.T, b *testBundle) []string {
	t.Helper()
	var out []string
	for _, e := range readEvents(t, filepath.Join(b.opts.DataDir, "runs", b.opts.RunID)) {
		if e.Type == "capability_started" {
			h, _ := e.Data["content_hash"].(string)
			out = append(out, h)
		}
	}
	return out
}

// TestDraftMayCallByBareID: a draft being written may still name a bare id;
// it resolves to the library's newest version.
func TestDraftMayCallByBareID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sealText(t, dir, "sign_on.yaml", signOn)
	v101 := sealText(t, dir, "sign_on-1.0.1.yaml", signOn101)
	lib, err := replay.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/lookup.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit := prerequisite("test.sign_on", "")
	draft, err := capability.Parse("lookup.yaml", []byte(strings.Replace(string(raw), edit[0], edit[1], 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := replay.Preflight(draft, lib); err != nil {
		t.Fatalf("Preflight of a draft: %v", err)
	}
	got, err := replay.Resolve(lib, "test.sign_on", "")
	if err != nil || got.Hash != v101.Hash {
		t.Errorf("bare id resolved to %v, %v; want 1.0.1 (%s)", got, err, v101.Hash)
	}
}

// TestExampleRootsPinTheirSignOn: the reference capabilities run the
// sign-on they were approved with even when a newer sign-on sits beside it
// in their library directory (issue 22: a bare id ran 1.0.1).
func TestExampleRootsPinTheirSignOn(t *testing.T) {
	t.Parallel()
	const examples = "../../examples/capabilities"
	dir := t.TempDir()
	for _, name := range []string{"corebank.auth.sign_on", "memberdesk.savings_balance", "memberdesk.savings_balance_quick", "memberdesk.transfer_funds", "memberdesk.transfer_history"} {
		raw, err := os.ReadFile(filepath.Join(examples, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	signOn100, err := capability.Load(filepath.Join(dir, "corebank.auth.sign_on.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(signOn100.File)
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(string(raw), "version: 1.0.0", "version: 1.0.1", 1)
	next = next[:strings.Index(next, "content_hash:")]
	v101 := sealText(t, dir, "corebank.auth.sign_on-1.0.1.yaml", next)
	lib, err := replay.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := replay.Resolve(lib, "corebank.auth.sign_on", ""); err != nil || got.Hash != v101.Hash {
		t.Fatalf("the library's newest sign-on is %v, %v; want 1.0.1", got, err)
	}
	for _, name := range []string{"memberdesk.savings_balance", "memberdesk.savings_balance_quick", "memberdesk.transfer_funds"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, err := capability.Load(filepath.Join(dir, name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := replay.Preflight(root, lib); err != nil {
				t.Fatalf("Preflight: %v", err)
			}
			calls := capability.Calls(root.Capability)
			if len(calls) == 0 {
				t.Fatal("the example calls no sign-on")
			}
			for _, c := range calls {
				sub, err := replay.Resolve(lib, c.Ref, c.Pin)
				if c.ReadBack {
					// The transfer's effect contract reads back with its pinned history.
					if err != nil || sub.Capability.Ref() != "memberdesk.transfer_history@1.0.0" {
						t.Errorf("%s resolves to %v, %v; want memberdesk.transfer_history@1.0.0", c.Field, sub, err)
					}
					continue
				}
				if err != nil || sub.Hash != signOn100.Hash {
					t.Errorf("%s resolves to %v, %v; want sign-on 1.0.0 (%s)", c.Field, sub, err, signOn100.Hash)
				}
			}
		})
	}
}
