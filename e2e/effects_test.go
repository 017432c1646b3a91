package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/policy"
)

// The tests in this file reproduce, in real Chromium against MemberDesk,
// each class of issue 8: a recovery after a landed step, a reload after a
// POST, a dialog after an irreversible submit, a dispatch an overlay
// interrupted, a stale result, and a target named by an input.

func approvedTransfer(c *capability.Loaded) runSpec {
	return runSpec{cap: c, inputs: transferInputs(), irrev: true, gates: []string{"submit"},
		approval: &policy.Approval{Capability: c.Capability.Ref(), ContentHash: c.Hash, Approver: "e2e reviewer"}}
}

func recordEffect(t *testing.T, rec *domain.RunRecord, step string) domain.Effect {
	t.Helper()
	if rec.Effects == nil {
		t.Fatalf("record has no effects: %+v", rec)
	}
	for _, se := range rec.Effects.Steps {
		if se.Step == step {
			return se.Effect
		}
	}
	t.Fatalf("effects %+v do not list %s", rec.Effects.Steps, step)
	return ""
}

// recordVerdict returns the read-back's verdict on step's effect, "" when
// none.
func recordVerdict(rec *domain.RunRecord, step string) domain.Effect {
	if rec.Effects == nil {
		return ""
	}
	for _, se := range rec.Effects.Steps {
		if se.Step == step {
			return se.Verdict
		}
	}
	return ""
}

// TestSignOnLandedBefore502: the sign-on POST lands, its answer is a 502.
// The reload remedy must not send the form again (the 502 page came from
// the POST): the run goes back to the entrypoint by GET, sees the sign-on's
// postcondition holding, and moves on with one sign-on click.
func TestSignOnLandedBefore502(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	b.arm(t, mockapp.FaultBadGatewayAfterPost, 1, 0)
	rec := b.run(t, runSpec{cap: load(t, "memberdesk.savings_balance"), inputs: member("12345")})
	if rec.Status != domain.StatusSuccess {
		t.Fatalf("status %s %s: %s, want SUCCESS", rec.Status, rec.FailureCode, rec.Message)
	}
	if got := b.state(t).Posts["/content/signon"]; got != 1 {
		t.Errorf("sign-on POSTs %d, want 1", got)
	}
	if rec.Outputs["savings_balance"] != "1234.56" {
		t.Errorf("outputs %v", rec.Outputs)
	}
	checkRecordSchema(t, rec, b.dataDir)
}

// TestReloadAfterPostNeverResends: the transfer's submit POST posts to the
// ledger and answers 502. The reload remedy would send the transfer again;
// the engine goes to the entrypoint by GET instead (or, with after_post:
// refuse, hands over), and because the irreversible step's result cannot be
// confirmed it is never sent again: exit 2, effect sent_unconfirmed (and
// verified by the transfer's read-back), one ledger entry, one submit POST.
func TestReloadAfterPostNeverResends(t *testing.T) {
	t.Parallel()
	rule := "recovery:\n  - id: bad_gateway\n    when:\n      http_status_in: [502]\n    remedy: reload\n    max_attempts: 1\n"
	for _, tt := range []struct {
		name, afterPost string
	}{
		{"entrypoint by GET", ""},
		{"refused", "    after_post: refuse\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, mockapp.Options{})
			c := derive(t, "memberdesk.transfer_funds", "recovery:\n", rule+tt.afterPost)
			// Let the sign-on and the review POSTs through; the submit lands
			// and answers 502.
			b.arm(t, mockapp.FaultBadGatewayAfterPost, 1, 2)
			rec := b.run(t, approvedTransfer(c))
			st := b.state(t)
			if got := st.Posts["/content/transfer/submit"]; got != 1 {
				t.Errorf("transfer submit POSTs %d, want 1 (posts %v)", got, st.Posts)
			}
			if n := b.ledgerLen(t); n != 1 {
				t.Errorf("ledger holds %d entries, want 1", n)
			}
			if rec.Status != domain.StatusNeedsHuman || rec.ExitCode != 2 {
				t.Errorf("status %s exit %d (%s: %s), want NEEDS_HUMAN exit 2", rec.Status, rec.ExitCode, rec.FailureCode, rec.Message)
			}
			if got := recordEffect(t, rec, "confirm"); got != domain.EffectSentUnconfirmed {
				t.Errorf("confirm effect %s, want sent_unconfirmed", got)
			}
			// The transfer's effect contract reads the history back: the
			// one entry is there, so the message says it landed.
			if !strings.HasPrefix(rec.Message, "EFFECT VERIFIED in the system of record: step confirm") ||
				recordVerdict(rec, "confirm") != domain.EffectVerified {
				t.Errorf("message %q (verdict %q) does not lead with the verified transfer", rec.Message, recordVerdict(rec, "confirm"))
			}
			checkRecordSchema(t, rec, b.dataDir)
		})
	}
}

// TestDialogAfterConfirm: the transfer posts, then an undeclared "Survey"
// dialog opens. The run ends exit 2 with the confirm step's effect
// sent_unconfirmed and its read-back verified, and the ledger holds one
// entry.
func TestDialogAfterConfirm(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	b.arm(t, mockapp.FaultDialogAfterSubmit, 1, 0)
	c := load(t, "memberdesk.transfer_funds")
	rec := b.run(t, approvedTransfer(c))
	if rec.Status != domain.StatusNeedsHuman || rec.ExitCode != 2 {
		t.Fatalf("status %s exit %d (%s: %s), want NEEDS_HUMAN exit 2", rec.Status, rec.ExitCode, rec.FailureCode, rec.Message)
	}
	if got := recordEffect(t, rec, "confirm"); got != domain.EffectSentUnconfirmed {
		t.Errorf("confirm effect %s, want sent_unconfirmed", got)
	}
	if !rec.Effects.Sent || !rec.Effects.Unconfirmed {
		t.Errorf("effects %+v, want sent and unconfirmed", rec.Effects)
	}
	if !strings.HasPrefix(rec.Message, "EFFECT VERIFIED in the system of record: step confirm") ||
		!strings.Contains(rec.Message, "Survey") || recordVerdict(rec, "confirm") != domain.EffectVerified {
		t.Errorf("message %q does not lead with the verified transfer and name the dialog", rec.Message)
	}
	if n := b.ledgerLen(t); n != 1 {
		t.Errorf("ledger holds %d entries, want 1", n)
	}
	checkRecordSchema(t, rec, b.dataDir)
}

// closeChat closes MemberDesk's "Chat with us" popup.
const closeChat = `schema_version: 1
id: memberdesk.close_chat
version: 1.0.0
title: Close the chat popup
surface: web
entrypoint:
  url_pattern: "{base_url}/"
risk: safe
steps:
  - id: close
    action: click
    target: {role: button, name: Close, scope: {frame: content}}
    postcondition:
      node_absent: {role: dialog, name: Chat with us}
policy:
  allowed_domains: ["127.0.0.1", "localhost"]
  max_steps: 5
  max_duration_ms: 10000
`

// TestFocusStealingPopup: a popup takes focus while the member number is
// typed. Declared as a recovery rule, it is closed and the number typed
// again; undeclared, the run hands over (NEEDS_HUMAN), never SURFACE_ERROR.
func TestFocusStealingPopup(t *testing.T) {
	t.Parallel()
	popupRule := "recovery:\n  - id: chat_popup\n    when:\n      node_exists: {role: dialog, name: Chat with us}\n    remedy: run_capability\n    capability: memberdesk.close_chat@1.0.0\n    max_attempts: 2\n"
	typed := "    value: {$input: member_id}\n  - id: search\n"
	check := "    value: {$input: member_id}\n    postcondition:\n      node_has_value:\n        target: {role: textbox, name: Member number, scope: {frame: content}}\n        value: {$input: member_id}\n  - id: search\n"
	t.Run("declared", func(t *testing.T) {
		t.Parallel()
		b := setup(t, mockapp.Options{})
		path := filepath.Join(t.TempDir(), "close_chat.yaml")
		if err := os.WriteFile(path, []byte(closeChat), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := capability.Seal(path); err != nil {
			t.Fatal(err)
		}
		closer, err := capability.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.lib.Add(closer); err != nil {
			t.Fatal(err)
		}
		pinned := strings.Replace(popupRule, "    max_attempts: 2\n", "    content_hash: "+closer.Hash+"\n    max_attempts: 2\n", 1)
		c := derive(t, "memberdesk.savings_balance", "recovery:\n", pinned, typed, check)
		b.arm(t, mockapp.FaultFocusSteal, 1, 0)
		rec := b.run(t, runSpec{cap: c, inputs: member("12345")})
		if rec.Status != domain.StatusSuccess || rec.Outputs["savings_balance"] != "1234.56" {
			t.Fatalf("status %s (%s: %s) outputs %v, want SUCCESS with the balance", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
		}
		if rec.RecoveryAttempts != 1 {
			t.Errorf("recoveries %d, want 1", rec.RecoveryAttempts)
		}
	})
	t.Run("undeclared", func(t *testing.T) {
		t.Parallel()
		b := setup(t, mockapp.Options{})
		b.arm(t, mockapp.FaultFocusSteal, 1, 0)
		rec := b.run(t, runSpec{cap: load(t, "memberdesk.savings_balance"), inputs: member("12345")})
		if rec.Status != domain.StatusNeedsHuman || rec.FailureCode == domain.CodeSurfaceError {
			t.Fatalf("status %s %s: %s, want NEEDS_HUMAN, not SURFACE_ERROR", rec.Status, rec.FailureCode, rec.Message)
		}
		if !strings.Contains(rec.Message, "Chat with us") {
			t.Errorf("message %q does not name the popup", rec.Message)
		}
	})
}

// buttonsApp is a page of decision buttons; clicking one says which. "Hold"
// appears twice.
func buttonsApp(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var clicked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_ = r.ParseForm()
			mu.Lock()
			clicked = append(clicked, r.Form.Get("decision"))
			mu.Unlock()
			fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Done</title></head><body><h1>Recorded %s</h1></body></html>`, r.Form.Get("decision"))
			return
		}
		fmt.Fprint(w, `<!DOCTYPE html><html><head><title>Case 7</title></head><body><h1>Case 7</h1><form method="post">
<button name="decision" value="Approve">Approve</button>
<button name="decision" value="Reject">Reject</button>
<button name="decision" value="Escalate">Escalate</button>
<button name="decision" value="Hold">Hold</button>
<button name="decision" value="Hold2">Hold</button>
</form></body></html>`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), clicked...) }
}

const decide = `schema_version: 1
id: test.decide
version: 1.0.0
title: Record a decision on a case
surface: web
entrypoint:
  url_pattern: "{base_url}/"
inputs:
  - name: decision
    type: enum
    enum: [Approve, Reject, Escalate, Hold]
risk: elevated
steps:
  - id: decide
    action: click
    target: {role: button, name: {$input: decision}}
    risk: elevated
    postcondition:
      node_exists: {role: heading, name: "Recorded {input.decision}"}
checkpoint:
  when:
    node_exists: {role: heading, name: {value: "Recorded", match: contains}}
escalation:
  triggers: [TARGET_AMBIGUOUS]
policy:
  allowed_domains: ["127.0.0.1"]
  max_steps: 5
  max_duration_ms: 20000
`

// TestTargetNamedByInput: one sealed capability clicks the button the
// caller names; a label shown twice still halts TARGET_AMBIGUOUS.
func TestTargetNamedByInput(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "decide.yaml")
	if err := os.WriteFile(path, []byte(decide), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Seal(path); err != nil {
		t.Fatal(err)
	}
	c, err := capability.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"Approve", "Reject", "Escalate", "Hold"} {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			srv, clicked := buttonsApp(t)
			b := &bundle{dataDir: t.TempDir(), logs: &syncBuffer{}, red: nil}
			rec := runOn(t, b, srv.URL, runSpec{cap: c, inputs: map[string]string{"decision": label}})
			if label == "Hold" {
				if rec.Status != domain.StatusNeedsHuman || rec.FailureCode != domain.CodeTargetAmbiguous {
					t.Fatalf("Hold: %s %s (%s), want NEEDS_HUMAN TARGET_AMBIGUOUS", rec.Status, rec.FailureCode, rec.Message)
				}
				if got := clicked(); len(got) != 0 {
					t.Errorf("an ambiguous label clicked %v", got)
				}
				return
			}
			if rec.Status != domain.StatusSuccess {
				t.Fatalf("%s: %s %s (%s)", label, rec.Status, rec.FailureCode, rec.Message)
			}
			if got := clicked(); len(got) != 1 || got[0] != label {
				t.Errorf("clicked %v, want [%s]", got, label)
			}
			if got := recordEffect(t, rec, "decide"); got != domain.EffectConfirmed {
				t.Errorf("effect %s, want confirmed", got)
			}
		})
	}
}

// TestFrameByTitle: scope.frame may name an iframe by its title: the
// reference lookup with every "content" scope written as the frame's title
// ("Workspace") reads the same answer.
func TestFrameByTitle(t *testing.T) {
	t.Parallel()
	b := setup(t, mockapp.Options{})
	raw, err := os.ReadFile(filepath.Join(examples, "memberdesk.savings_balance.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(raw), "scope: {frame: content}")
	edits := make([]string, 0, 2*n)
	for range n {
		edits = append(edits, "scope: {frame: content}", "scope: {frame: Workspace}")
	}
	c := derive(t, "memberdesk.savings_balance", edits...)
	rec := b.run(t, runSpec{cap: c, inputs: member("12345")})
	if rec.Status != domain.StatusSuccess || rec.Outputs["savings_balance"] != "1234.56" {
		t.Fatalf("%s %s (%s) outputs %v, want SUCCESS with 1234.56", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}
}
