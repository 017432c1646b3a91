package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/model/modeltest"
	"github.com/cuahq/cua/internal/surface/sim"
)

// TestCompletionAudit: a claimed success is accepted only when a second,
// narrow read (purpose "audit": goal, claim and the current screen, under
// the audit contract) confirms it. A rejected claim is a notice and the run
// goes on; three rejections end it as gave_up; a confirmed claim finishes
// with the claimed element as the trace's checkpoint.
func TestCompletionAudit(t *testing.T) {
	t.Parallel()
	const claim = "The savings balance is shown"
	falseClaim := finish(1, claim)
	rejected := reply(audit("rejected", "the screen shows the search form, not a balance"))
	tests := []struct {
		name     string
		stubs    []modeltest.Stub
		status   agent.Status
		reason   string
		purposes []string
		verdicts []string
		clicks   int // Search clicks the app received
	}{
		{
			name:     "ThreeRejectionsGiveUp",
			stubs:    []modeltest.Stub{reply(falseClaim), rejected, reply(falseClaim), rejected, reply(falseClaim), rejected},
			status:   agent.StatusGaveUp,
			reason:   "three claims of success were rejected by the audit",
			purposes: []string{"decide", "audit", "decide", "audit", "decide", "audit"},
			verdicts: []string{"audit rejected", "audit rejected", "audit rejected"},
		},
		{
			name: "RejectionThenContinue",
			stubs: []modeltest.Stub{
				reply(falseClaim), rejected,
				reply(typeText(2, "10042", "member_id")),
				reply(clickExpecting(3, "Member Details")),
				reply(finish(1, claim)), reply(audit("confirmed", "the details page shows the balance")),
			},
			status:   agent.StatusFinished,
			reason:   claim,
			purposes: []string{"decide", "audit", "decide", "decide", "decide", "audit"},
			verdicts: []string{"audit rejected", "ok", "ok", "finished"},
			clicks:   1,
		},
		{
			name:     "AuditAnswerBreaksItsContract",
			stubs:    []modeltest.Stub{reply(falseClaim), reply(`{"verdict":"maybe"}`), reply(giveUp("cannot find it"))},
			status:   agent.StatusGaveUp,
			reason:   "cannot find it",
			purposes: []string{"decide", "audit", "decide"},
			verdicts: []string{"audit rejected", "gave up"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.stubs...)
			f := lookupApp("$1,234.56")
			res := b.run(t, b.config(sim.New(f), "Find the savings balance of member 10042"))

			if res.Status != tc.status || res.Reason != tc.reason {
				t.Errorf("Status, Reason = %s, %q; want %s, %q", res.Status, res.Reason, tc.status, tc.reason)
			}
			if got := b.model.purposes(); !slices.Equal(got, tc.purposes) {
				t.Errorf("purposes = %q, want %q", got, tc.purposes)
			}
			if got := b.progress.verdicts(); !slices.Equal(got, tc.verdicts) {
				t.Errorf("verdicts = %q, want %q", got, tc.verdicts)
			}
			if want := len(tc.stubs) * usage.Total(); res.Tokens != want {
				t.Errorf("Tokens = %d, want %d (audits are charged too)", res.Tokens, want)
			}
			if res.Steps != len(tc.verdicts) {
				t.Errorf("Steps = %d, want %d (an audit is part of its step)", res.Steps, len(tc.verdicts))
			}
			if n := f.Count("button", "Search"); n != tc.clicks {
				t.Errorf("Search clicked %d times, want %d", n, tc.clicks)
			}
			if res.Status != agent.StatusFinished && (res.Trace.Finished || res.Trace.Checkpoint != nil) {
				t.Errorf("an unconfirmed claim left Finished=%v Checkpoint=%+v in the trace", res.Trace.Finished, res.Trace.Checkpoint)
			}

			// The audit is narrow: its own instruction and contract, the
			// goal, the claim and the current screen; no history.
			reqs := b.model.requests()
			au := reqs[1]
			if au.Purpose != "audit" || !strings.Contains(string(au.Contract), "cua completion audit") {
				t.Fatalf("second request = %q with contract %.60s…, want the audit", au.Purpose, au.Contract)
			}
			if !slices.Contains(au.Context, "Claim: "+claim) || au.Goal != "Find the savings balance of member 10042" {
				t.Errorf("audit context = %q, goal %q; want the claim and the goal", au.Context, au.Goal)
			}
			if au.Observation != reqs[0].Observation {
				t.Error("the audit did not read the screen the claim was made on")
			}
			if strings.Contains(strings.Join(au.Context, "\n"), "Steps so far") {
				t.Errorf("the audit is not narrow: it reads the history %q", au.Context)
			}
			// The rejection reaches the model as a notice.
			if !strings.Contains(b.userText(t, 2), "Notice: the completion audit rejected your claim: ") {
				t.Errorf("the request after a rejection lacks the audit's notice:\n%s", b.userText(t, 2))
			}
		})
	}
}

// TestCompletionAuditConfirmed: a true claim on the first try finishes the
// run, and the element the claim points at becomes the checkpoint.
func TestCompletionAuditConfirmed(t *testing.T) {
	t.Parallel()
	b := setup(t,
		reply(typeText(2, "10042", "member_id")),
		reply(click(3)),
		reply(finish(1, "Member Details are shown")),
		reply(audit("confirmed", "the heading reads Member Details")),
	)
	f := lookupApp("$1,234.56")
	res := b.run(t, b.config(sim.New(f), "Open the details of member 10042"))

	if res.Status != agent.StatusFinished || res.Reason != "Member Details are shown" {
		t.Fatalf("Status, Reason = %s, %q; want finished with the claim", res.Status, res.Reason)
	}
	if res.Steps != 3 || res.Tokens != 4*usage.Total() {
		t.Errorf("Steps, Tokens = %d, %d; want 3, %d", res.Steps, res.Tokens, 4*usage.Total())
	}
	if !res.Trace.Finished {
		t.Error("trace not marked finished")
	}
	cp := res.Trace.Checkpoint
	if cp == nil || cp.NodeExists == nil {
		t.Fatalf("Checkpoint = %+v, want node_exists", cp)
	}
	d := cp.NodeExists
	if d.Role != "heading" || d.Name == nil || d.Name.Value != "Member Details" || d.Hints != nil {
		t.Errorf("checkpoint target = %+v, want heading \"Member Details\" without hints", d)
	}
	if r := b.progress.reports(); r[2].Tokens != 2*usage.Total() {
		t.Errorf("the finish step reports %d tokens, want %d (turn and audit)", r[2].Tokens, 2*usage.Total())
	}
	if !slices.Equal(b.model.purposes(), []string{"decide", "decide", "decide", "audit"}) {
		t.Errorf("purposes = %q", b.model.purposes())
	}
}
