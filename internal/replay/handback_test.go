package replay_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/sim"
)

// memberCardApp serves a member search whose result is a member card: a
// row that reads "Member NNNNN" and holds the card's one "Look up" button,
// which opens that member's details. The card shows shown whatever member
// was searched for (an app that answers with another member's record).
func memberCardApp(shown, balance string) *sim.Flow {
	f := sim.NewFlow(base,
		sim.Screen{Name: "search", Title: "Member Search", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Search"},
			{Role: "textbox", Name: "Member number"},
			{Role: "button", Name: "Search"},
		}},
		sim.Screen{Name: "card", Title: "Member card", Nodes: []sim.Node{
			{Role: "heading", Name: "Member card"},
			{Role: "button", Name: "Look up", Row: "Member " + shown},
		}},
		sim.Screen{Name: "details", Title: "Member Details", Nodes: []sim.Node{
			{Role: "heading", Name: "Member Details"},
			{Role: "cell", Name: "Active", Row: "Status"},
			{Role: "cell", Name: balance, Row: "Savings Balance"},
			{Role: "cell", Name: "11/30/2026", Row: "As of"},
		}},
	)
	f.On("button", "Search", sim.Goto("card"))
	f.On("button", "Look up", sim.Goto("details"))
	return f
}

// lookUpStep makes the lookup open the member's card and click the "Look
// up" next to the member asked for.
var lookUpStep = []string{
	"  - id: read_status\n",
	`  - id: look_up
    action: click
    target:
      role: button
      name: Look up
      anchor: {relation: adjacent_to, text: "Member {input.member_id}"}
    postcondition:
      node_exists: {role: heading, name: Member Details}
  - id: read_status
`,
	"    target: {role: button, name: Search}\n    postcondition:\n      node_exists: {role: heading, name: Member Details}\n",
	"    target: {role: button, name: Search}\n    postcondition:\n      node_exists: {role: heading, name: Member card}\n",
}

// TestAnchorAlwaysAppliesInReplay (issue 24): the card's only "Look up"
// sits next to another member. The name alone finds one node, but the
// anchor does not hold: the run halts TARGET_NOT_FOUND naming the anchor,
// never clicks, and returns nothing; on the right member's card it reads
// the record.
func TestAnchorAlwaysAppliesInReplay(t *testing.T) {
	t.Parallel()
	t.Run("another member's card", func(t *testing.T) {
		t.Parallel()
		b := setup(t, spec{cap: "lookup.yaml", edits: lookUpStep, app: func() *sim.Flow { return memberCardApp("56789", "$9,999.00") },
			inputs: member("12345")})
		rec := b.run(t)
		checkRecord(t, rec, want{status: domain.StatusNeedsHuman, code: domain.CodeTargetNotFound, dispatches: 3})
		if !strings.Contains(rec.Message, `adjacent_to "Member 12345"`) {
			t.Errorf("message %q does not name the anchor", rec.Message)
		}
		if n := b.flow.Count("button", "Look up"); n != 0 {
			t.Errorf("Look up clicked %d times, want 0", n)
		}
	})
	t.Run("the member's card", func(t *testing.T) {
		t.Parallel()
		b := setup(t, spec{cap: "lookup.yaml", edits: lookUpStep, app: func() *sim.Flow { return memberCardApp("12345", "$1,234.56") },
			inputs: member("12345")})
		rec := b.run(t)
		checkRecord(t, rec, want{status: domain.StatusSuccess, dispatches: 4, outputs: map[string]string{"balance": "1234.56"}})
	})
}

// droppingSignOnApp is signOnApp whose sign-on lets the first drops
// sign-ons in and drops the session at once (every one when drops < 0):
// the app shows the sign-on form again, with a notice.
func droppingSignOnApp(drops int) func() *sim.Flow {
	return func() *sim.Flow {
		f := sim.NewFlow(base,
			sim.Screen{Name: "signon", Title: "Sign on", Nodes: []sim.Node{
				{Role: "heading", Name: "Sign on"},
				{Role: "button", Name: "Sign on"},
			}},
			sim.Screen{Name: "expired", Title: "Sign on", Nodes: []sim.Node{
				{Role: "heading", Name: "Sign on"},
				{Role: "text", Name: "Your session expired. Please sign on again."},
				{Role: "button", Name: "Sign on"},
			}},
			sim.Screen{Name: "rejected", Title: "Sign on", Nodes: []sim.Node{
				{Role: "heading", Name: "Sign on"},
				{Role: "text", Name: "Access denied"},
				{Role: "button", Name: "Sign on"},
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
		n := 0
		f.On("button", "Sign on", func(ev *sim.Event) error {
			n++
			if drops < 0 || n <= drops {
				return ev.Goto("expired")
			}
			return ev.Goto("search")
		})
		f.On("button", "Search", sim.Goto("details"))
		return f
	}
}

// sessionExpired is the lookup's recovery rule for a session gone: sign on
// again, at most max times.
func sessionExpired(pin, max string) string {
	return `  - id: session_expired
    when:
      node_exists: {role: button, name: Sign on}
    remedy: run_capability
    capability: test.sign_on@1.0.0
    content_hash: ` + pin + `
    max_attempts: ` + max + `
    backoff: {initial_ms: 0, factor: 1, max_ms: 0}
`
}

// TestSessionDropsAfterSignOnPrerequisite (issue 24): the sign-on
// prerequisite's click lands, and the app shows the sign-on form again: the
// prerequisite's postcondition fails. Its failure hands the screen back to
// the lookup, whose session_expired rule signs on again, bounded by its
// max_attempts; a session that always drops ends RECOVERY_EXHAUSTED. With
// no rule of the caller's matching, the prerequisite's failure ends the run
// as before; a result the sign-on declares itself (credentials refused) is
// never retried by the caller.
func TestSessionDropsAfterSignOnPrerequisite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	signOnRejects := signOn + `outcomes:
  - code: credentials_rejected
    when:
      text_present: Access denied
`
	v100 := sealText(t, dir, "sign_on.yaml", signOn)
	lib, err := replay.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rejectDir := t.TempDir()
	rejecting := sealText(t, rejectDir, "sign_on.yaml", signOnRejects)
	rejectLib, err := replay.LoadDir(rejectDir)
	if err != nil {
		t.Fatal(err)
	}
	withRule := func(pin, max string) []string {
		return append(prerequisite("test.sign_on@1.0.0", pin), "recovery:\n", "recovery:\n"+sessionExpired(pin, max))
	}
	rejectApp := func() *sim.Flow {
		f := droppingSignOnApp(0)()
		f.On("button", "Sign on", sim.Goto("rejected"))
		return f
	}
	tests := []struct {
		name    string
		edits   []string
		lib     replay.Library
		app     func() *sim.Flow
		want    want
		signOns int      // clicks on Sign on
		msg     []string // substrings of the record's message
	}{
		{name: "drops once, the caller's session_expired signs on again", edits: withRule(v100.Hash, "2"), lib: lib, app: droppingSignOnApp(1),
			want:    want{status: domain.StatusSuccess, recoveries: 1, dispatches: 5, outputs: map[string]string{"balance": "1234.56"}},
			signOns: 2},
		{name: "drops twice, within max_attempts", edits: withRule(v100.Hash, "2"), lib: lib, app: droppingSignOnApp(2),
			want:    want{status: domain.StatusSuccess, recoveries: 2, dispatches: 6, outputs: map[string]string{"balance": "1234.56"}},
			signOns: 3},
		{name: "always drops, RECOVERY_EXHAUSTED after max_attempts", edits: withRule(v100.Hash, "2"), lib: lib, app: droppingSignOnApp(-1),
			want:    want{status: domain.StatusNeedsHuman, code: domain.CodeRecoveryExhausted, recoveries: 2, dispatches: 4},
			signOns: 3, msg: []string{"recovery session_expired exhausted after 2 attempt(s)", "test.sign_on@1.0.0: step sign_on postcondition"}},
		{name: "always drops, max_attempts 1", edits: withRule(v100.Hash, "1"), lib: lib, app: droppingSignOnApp(-1),
			want:    want{status: domain.StatusNeedsHuman, code: domain.CodeRecoveryExhausted, recoveries: 1, dispatches: 3},
			signOns: 2},
		{name: "no rule of the caller's matches: the prerequisite's failure", edits: prerequisite("test.sign_on@1.0.0", v100.Hash), lib: lib, app: droppingSignOnApp(1),
			want:    want{status: domain.StatusNeedsHuman, code: domain.CodeUnexpectedState, dispatches: 2},
			signOns: 1, msg: []string{"test.sign_on@1.0.0: step sign_on postcondition"}},
		{name: "the sign-on's own outcome is not retried", edits: withRule(rejecting.Hash, "2"), lib: rejectLib, app: rejectApp,
			want:    want{status: domain.StatusFailed, code: domain.CodePrerequisiteFailed, dispatches: 2},
			signOns: 1, msg: []string{"credentials_rejected"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, spec{cap: "lookup.yaml", edits: tt.edits, app: tt.app, inputs: member("12345")})
			b.opts.Library = tt.lib
			rec := b.run(t)
			t.Logf("%s %s: %s", rec.Status, rec.FailureCode, rec.Message)
			checkRecord(t, rec, tt.want)
			if n := b.flow.Count("button", "Sign on"); n != tt.signOns {
				t.Errorf("Sign on clicked %d times, want %d", n, tt.signOns)
			}
			for _, m := range tt.msg {
				if !strings.Contains(rec.Message, m) {
					t.Errorf("message %q does not say %q", rec.Message, m)
				}
			}
		})
	}
}
