package replay_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/sim"
)

// surveyTransferApp posts the transfer and then opens a "Survey" dialog
// over the confirmation: the irreversible action landed, but the screen is
// one the capability never declared.
func surveyTransferApp() *sim.Flow {
	f := sim.NewFlow(base,
		sim.Screen{Name: "form", Title: "Transfer", Nodes: []sim.Node{
			{Role: "heading", Name: "Transfer"},
			{Role: "textbox", Name: "Amount"},
			{Role: "button", Name: "Submit transfer"},
		}},
		sim.Screen{Name: "posted", Title: "Transfer posted", Nodes: []sim.Node{
			{Role: "heading", Name: "Transfer posted"},
			{Role: "cell", Name: "TRF-0001", Row: "Confirmation"},
			{Role: "dialog", Name: "Survey"},
			{Role: "button", Name: "Close survey"},
		}},
	)
	f.On("button", "Submit transfer", func(ev *sim.Event) error {
		ev.Append("transfer " + ev.Value("textbox", "Amount"))
		return ev.Goto("posted")
	})
	return f
}

// TestDialogAfterIrreversibleSubmit: the transfer posted, then an undeclared
// dialog opened. The run must say the transfer was sent and not confirmed,
// end NEEDS_HUMAN (exit 2, never 1), and the ledger holds one entry.
func TestDialogAfterIrreversibleSubmit(t *testing.T) {
	t.Parallel()
	runRow(t, spec{
		cap: "transfer.yaml", app: surveyTransferApp, inputs: map[string]string{"amount": "25"},
		prepare: func(t *testing.T, b *testBundle) {
			b.opts.ReleasedGates = []string{"submit"}
			b.opts.AllowIrreversible = true
			b.opts.Approval = &policy.Approval{Capability: "test.transfer@1.0.0", ContentHash: b.loaded.Hash, Approver: "reviewer"}
		},
		check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
			wantEffect(t, rec, "submit", domain.EffectSentUnconfirmed)
			if !rec.Effects.Sent || !rec.Effects.Unconfirmed {
				t.Errorf("effects summary %+v, want sent and unconfirmed", rec.Effects)
			}
			if !strings.HasPrefix(rec.Message, "EFFECT SENT, UNCONFIRMED: step submit (irreversible) was submitted") {
				t.Errorf("message %q does not lead with the sent transfer", rec.Message)
			}
			if !strings.Contains(rec.Message, `undeclared dialog "Survey"`) {
				t.Errorf("message %q does not name the dialog", rec.Message)
			}
			last := rec.Steps[len(rec.Steps)-1]
			if last.ID != "submit" || last.Effect != domain.EffectSentUnconfirmed || last.Risk != domain.RiskIrreversible {
				t.Errorf("last step %+v, want submit with its irreversible, unconfirmed effect", last)
			}
			if n := b.flow.Count("button", "Close survey"); n != 0 {
				t.Errorf("the undeclared dialog was touched %d times", n)
			}
		},
		want: want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 3,
			ledger: []string{"transfer 25.00"}, steps: []string{"enter_amount", "submit"}},
	})
}

// TestConfirmedEffect: an approved transfer whose postcondition held
// records its effect as confirmed.
func TestConfirmedEffect(t *testing.T) {
	t.Parallel()
	runRow(t, spec{
		cap: "transfer.yaml", app: func() *sim.Flow { return transferApp("TRF-0001") }, inputs: map[string]string{"amount": "25"},
		prepare: func(t *testing.T, b *testBundle) {
			b.opts.ReleasedGates = []string{"submit"}
			b.opts.AllowIrreversible = true
			b.opts.Approval = &policy.Approval{Capability: "test.transfer@1.0.0", ContentHash: b.loaded.Hash, Approver: "reviewer"}
		},
		check: func(t *testing.T, _ *testBundle, rec *domain.RunRecord) {
			wantEffect(t, rec, "submit", domain.EffectConfirmed)
			if !rec.Effects.Sent || rec.Effects.Unconfirmed {
				t.Errorf("effects summary %+v, want sent and confirmed", rec.Effects)
			}
			if strings.Contains(rec.Message, "EFFECT") {
				t.Errorf("a confirmed run warns: %q", rec.Message)
			}
		},
		want: want{status: domain.StatusSuccess, dispatches: 3, ledger: []string{"transfer 25.00"},
			outputs: map[string]string{"confirmation": "TRF-0001"}},
	})
}

// notLanded fails the first type dispatch with surface.ErrNotLanded after
// letting it through, and runs then (the app's reaction: a popup).
type notLanded struct {
	surface.Surface
	then  func()
	fired atomic.Bool
}

func (s *notLanded) Dispatch(ctx context.Context, a policy.AuthorizedAction) (surface.Result, error) {
	r, err := s.Surface.Dispatch(ctx, a)
	if err == nil && a.Type() == domain.ActType && s.fired.CompareAndSwap(false, true) {
		s.then()
		return r, fmt.Errorf("typed value did not land in %q: it holds 1 of 5 characters: %w", a.Node().Name, surface.ErrNotLanded)
	}
	return r, err
}

// popupLookupApp is the lookup app with a "Chat with us" popup screen
// (the search form under a dialog whose Close button closes it).
func popupLookupApp() *sim.Flow {
	f := sim.NewFlow(base,
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
		sim.Screen{Name: "popup", Title: "Member Search", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Search"},
			{Role: "textbox", Name: "Member number"},
			{Role: "button", Name: "Search"},
			{Role: "dialog", Name: "Chat with us"},
			{Role: "button", Name: "Close"},
		}},
	)
	f.On("button", "Search", sim.Goto("details"))
	f.On("button", "Close", sim.Goto("search"))
	return f
}

// closeChat is a sealed capability that closes the popup.
const closeChat = `schema_version: 1
id: test.close_chat
version: 1.0.0
title: Close the chat popup
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: safe
steps:
  - id: close
    action: click
    target: {role: button, name: Close}
    postcondition:
      node_absent: {role: dialog, name: Chat with us}
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 5
  max_duration_ms: 10000
`

// closeChatHash is the content hash of closeChat.
func closeChatHash(t *testing.T) string {
	t.Helper()
	l, err := capability.Parse("close_chat.yaml", []byte(closeChat))
	if err != nil {
		t.Fatal(err)
	}
	return l.Hash
}

func sealText(t *testing.T, dir, name, text string) *capability.Loaded {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatalf("seal %s: %v", name, err)
	}
	l, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestDispatchFailureIsClassified: a popup steals focus while typing. With
// a recovery rule for it, the popup is closed and the member typed again;
// without one the run ends NEEDS_HUMAN on the undeclared dialog, never
// SURFACE_ERROR.
func TestDispatchFailureIsClassified(t *testing.T) {
	t.Parallel()
	rule := `recovery:
  - id: chat_popup
    when:
      node_exists: {role: dialog, name: Chat with us}
    remedy: run_capability
    capability: test.close_chat@1.0.0
    content_hash: ` + closeChatHash(t) + `
    max_attempts: 2
  - id: bad_gateway`
	wrap := func(t *testing.T, b *testBundle) {
		b.opts.Surface = &notLanded{Surface: b.sim, then: func() {
			if err := b.flow.Push(sim.Goto("popup")); err != nil {
				t.Error(err)
			}
		}}
		lib, err := replay.LoadDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := lib.Add(sealText(t, t.TempDir(), "close_chat.yaml", closeChat)); err != nil {
			t.Fatal(err)
		}
		b.opts.Library = lib
	}
	t.Run("declared popup is closed and the value typed again", func(t *testing.T) {
		t.Parallel()
		runRow(t, spec{
			cap: "lookup.yaml", edits: []string{"recovery:\n  - id: bad_gateway", rule}, app: popupLookupApp, inputs: member("12345"),
			prepare: wrap,
			check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
				if n := b.flow.Count("button", "Close"); n != 1 {
					t.Errorf("Close clicked %d times, want 1", n)
				}
				if rec.Steps[0].Status != "interrupted" {
					t.Errorf("first step %+v, want interrupted", rec.Steps[0])
				}
			},
			want: want{status: domain.StatusSuccess, recoveries: 1, dispatches: 5,
				outputs: map[string]string{"status": "Active", "balance": "1234.56", "as_of": "2026-11-30"}},
		})
	})
	t.Run("undeclared popup hands over", func(t *testing.T) {
		t.Parallel()
		runRow(t, spec{
			cap: "lookup.yaml", app: popupLookupApp, inputs: member("12345"), prepare: wrap,
			check: func(t *testing.T, b *testBundle, rec *domain.RunRecord) {
				for _, want := range []string{"typed value did not land", `undeclared dialog "Chat with us"`} {
					if !strings.Contains(rec.Message, want) {
						t.Errorf("message %q does not say %q", rec.Message, want)
					}
				}
				if n := b.flow.Count("button", "Close"); n != 0 {
					t.Errorf("the undeclared popup was touched %d times", n)
				}
			},
			want: want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 2, steps: []string{"enter_member"}},
		})
	})
}

// TestPreflight: every sub-capability is resolved, sealed and pin-checked
// before the surface is touched.
func TestPreflight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	closer := sealText(t, dir, "close_chat.yaml", closeChat)
	lib, err := replay.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	zeros := "sha256:" + strings.Repeat("0", 64)
	rule := func(ref, pin string) string {
		s := "recovery:\n  - id: chat_popup\n    when:\n      node_exists: {role: dialog, name: Chat with us}\n    remedy: run_capability\n    capability: " + ref + "\n"
		if pin != "" {
			s += "    content_hash: " + pin + "\n"
		}
		return s + "    max_attempts: 1\n  - id: bad_gateway"
	}
	tests := []struct {
		name    string
		ref     string
		pin     string
		lib     replay.Library
		wantErr string
	}{
		{"resolved and pinned", "test.close_chat@1.0.0", closer.Hash, lib, ""},
		{"bare id", "test.close_chat", "", lib, `"test.close_chat" is not pinned: want id@version with content_hash`},
		{"bare id with a pin", "test.close_chat", closer.Hash, lib, `"test.close_chat" is not pinned`},
		{"id@version without a pin", "test.close_chat@1.0.0", "", lib, `"test.close_chat@1.0.0" is not pinned`},
		{"missing", "test.nothing@1.0.0", zeros, lib, "test.nothing@1.0.0 (" + zeros + ") is not in the library"},
		{"pinned to other content", "test.close_chat@1.0.0", zeros, lib, "is pinned to " + zeros + ", but " + closer.File + " holds " + closer.Hash},
		{"no library", "test.close_chat@1.0.0", closer.Hash, nil, "no capability library was given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := seal(t, "lookup.yaml", "recovery:\n  - id: bad_gateway", rule(tt.ref, tt.pin))
			err := replay.Preflight(l, tt.lib)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Preflight: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Preflight error %v, want one containing %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), "recovery[0].capability") {
				t.Errorf("error %v does not name the field", err)
			}
			// The run refuses before the surface is touched.
			f := popupLookupApp()
			s := sim.New(f)
			defer s.Close()
			rec, rerr := replay.Run(t.Context(), replay.Options{Capability: l, Library: tt.lib, Inputs: member("12345"),
				BaseURL: base, Surface: s, RunID: "run-1"})
			if rerr != nil {
				t.Fatal(rerr)
			}
			if rec.Status != domain.StatusFailed || rec.DispatchCount != 0 || len(f.Handled()) != 0 {
				t.Errorf("run %s with %d dispatches and %d app actions, want FAILED with none", rec.Status, rec.DispatchCount, len(f.Handled()))
			}
		})
	}
}

// TestLibraryRefusesDuplicates: two files claiming one id@version are
// refused at load, naming both (issue 9: a second sign-on replaced the
// first silently).
func TestLibraryRefusesDuplicates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := sealText(t, dir, "a.yaml", closeChat)
	b := sealText(t, dir, "b.yaml", strings.Replace(closeChat, "Close the chat popup", "Close it, elsewhere", 1))
	_, err := replay.LoadDir(dir)
	var dup *replay.DuplicateError
	if err == nil || !errors.As(err, &dup) {
		t.Fatalf("LoadDir = %v, want a DuplicateError", err)
	}
	for _, f := range []string{a.File, b.File, "test.close_chat@1.0.0"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not name %s", err, f)
		}
	}
	if domain.ErrorCode(err) != domain.CodeCapabilityInvalid {
		t.Errorf("code %s, want CAPABILITY_INVALID", domain.ErrorCode(err))
	}
}

// TestFailureMessages: a failure names the recoveries that ran before it
// and quotes the application's own alert text.
func TestFailureMessages(t *testing.T) {
	t.Parallel()
	alertApp := func() *sim.Flow {
		f := sim.NewFlow(base,
			sim.Screen{Name: "search", Title: "Member Search", Nodes: []sim.Node{
				{Role: "heading", Name: "Member Search"},
				{Role: "textbox", Name: "Member number"},
				{Role: "button", Name: "Search"},
			}},
			sim.Screen{Name: "offline", Title: "Member Search", Nodes: []sim.Node{
				{Role: "heading", Name: "Member Search"},
				{Role: "alert", Name: "Core system offline: try again at 06:00"},
			}},
		)
		f.On("button", "Search", sim.Goto("offline"))
		f.OnLoad("search", sim.Nth(1, sim.Fault(502)))
		return f
	}
	runRow(t, spec{
		cap: "lookup.yaml", app: alertApp, inputs: member("12345"),
		check: func(t *testing.T, _ *testBundle, rec *domain.RunRecord) {
			for _, want := range []string{"(after recovering with bad_gateway)", `the application says: "Core system offline: try again at 06:00"`} {
				if !strings.Contains(rec.Message, want) {
					t.Errorf("message %q does not say %q", rec.Message, want)
				}
			}
		},
		// entry, reload, type, click
		want: want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, recoveries: 1, dispatches: 4,
			steps: []string{"enter_member", "search"}},
	})
}
