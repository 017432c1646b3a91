package agent_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/model/modeltest"
	"github.com/cuahq/cua/internal/surface/sim"
)

// approver is a scripted Approver that records what it was asked.
type approver struct {
	say   bool
	mu    sync.Mutex
	asked []agent.Proposal
}

var _ agent.Approver = (*approver)(nil)

func (a *approver) Approve(_ context.Context, p agent.Proposal) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, p)
	return a.say, nil
}

func (a *approver) proposals() []agent.Proposal {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asked)
}

const heldNotice = `Notice: click button "Submit transfer" (irreversible) needs an approval the autonomy level requires; it was not performed`

// TestIrreversibleControl: a model that clicks "Submit transfer" gets it
// performed only with the approval its autonomy level requires: a scoped
// grant (each use spent), an approver's yes, or sovereign delegation.
// Without one the click is held (never dispatched), the model is told, and
// the run ends by the ladder, the stuck guard or the budget.
func TestIrreversibleControl(t *testing.T) {
	t.Parallel()
	submit := reply(click(3))
	amount := reply(typeText(2, "250", ""))
	done := reply(giveUp("done"))
	tests := []struct {
		name      string
		stubs     []modeltest.Stub
		autonomy  int
		grants    []agent.Grant
		approver  *approver
		sovereign bool
		status    agent.Status
		verdicts  []string // "*" for any verdict but held or refused
		transfers []string
		asked     int // proposals the approver saw
	}{
		{
			// Held three times (ladder rungs 1-3); the stuck guard then
			// refuses the fourth and fifth and ends the run at the sixth.
			name:     "AutoWithoutApproverOrGrant",
			stubs:    []modeltest.Stub{submit.Always()},
			autonomy: agent.LevelAuto,
			status:   agent.StatusStuck,
			verdicts: []string{"held", "held", "held", "refused", "refused", "stuck"},
		},
		{
			name:     "AutoWithGrantForAnotherControl",
			stubs:    []modeltest.Stub{amount, submit, done},
			autonomy: agent.LevelAuto,
			grants:   []agent.Grant{{Match: "Delete", Uses: 5}, {Match: "Submit transfer", Uses: 0}},
			status:   agent.StatusGaveUp,
			verdicts: []string{"*", "held", "gave up"},
		},
		{
			name:      "AutoWithOneUseGrant",
			stubs:     []modeltest.Stub{amount, submit, submit, done},
			autonomy:  agent.LevelAuto,
			grants:    []agent.Grant{{Match: "Submit transfer", Uses: 1}},
			status:    agent.StatusGaveUp,
			verdicts:  []string{"*", "*", "held", "gave up"},
			transfers: []string{"transfer 250"},
		},
		{
			name:      "GrantMatchIgnoresCase",
			stubs:     []modeltest.Stub{submit, done},
			autonomy:  agent.LevelAuto,
			grants:    []agent.Grant{{Match: "submit TRANSFER", Uses: 1}},
			status:    agent.StatusGaveUp,
			verdicts:  []string{"*", "gave up"},
			transfers: []string{"transfer "},
		},
		{
			name:     "AutoApproverSaysNo",
			stubs:    []modeltest.Stub{submit, done},
			autonomy: agent.LevelAuto,
			approver: &approver{say: false},
			status:   agent.StatusGaveUp,
			verdicts: []string{"held", "gave up"},
			asked:    1,
		},
		{
			name:     "ConfirmRiskyApproverSaysNo",
			stubs:    []modeltest.Stub{amount, submit, done},
			autonomy: agent.LevelConfirmRisky,
			approver: &approver{say: false},
			status:   agent.StatusGaveUp,
			verdicts: []string{"*", "held", "gave up"},
			asked:    1, // typing an amount is safe: not asked
		},
		{
			name:      "ConfirmRiskyApproverSaysYes",
			stubs:     []modeltest.Stub{amount, submit, done},
			autonomy:  agent.LevelConfirmRisky,
			approver:  &approver{say: true},
			status:    agent.StatusGaveUp,
			verdicts:  []string{"*", "*", "gave up"},
			transfers: []string{"transfer 250"},
			asked:     1,
		},
		{
			name:      "ConfirmRiskyGrantWithoutApprover",
			stubs:     []modeltest.Stub{submit, done},
			autonomy:  agent.LevelConfirmRisky,
			grants:    []agent.Grant{{Match: "Submit transfer", Uses: 1}},
			status:    agent.StatusGaveUp,
			verdicts:  []string{"*", "gave up"},
			transfers: []string{"transfer "},
		},
		{
			name:      "SovereignWithBudget",
			stubs:     []modeltest.Stub{amount, submit, done},
			autonomy:  agent.LevelAuto,
			sovereign: true,
			status:    agent.StatusGaveUp,
			verdicts:  []string{"*", "*", "gave up"},
			transfers: []string{"transfer 250"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.stubs...)
			f := transferApp()
			cfg := b.config(sim.New(f), "Transfer 250 to savings")
			cfg.Autonomy, cfg.Grants, cfg.Sovereign = tc.autonomy, tc.grants, tc.sovereign
			if tc.approver != nil {
				cfg.Approver = tc.approver
			}
			if tc.sovereign {
				// Sovereign autonomy needs a deadline; it only has to outlast
				// a slow machine, not end the run.
				cfg.Budget.Deadline, cfg.Budget.MaxTokens = runBound, 100_000
			}
			cfg.DataDir = t.TempDir()
			grantsBefore := slices.Clone(tc.grants)
			res := b.run(t, cfg)

			if res.Status != tc.status {
				t.Errorf("Status = %s (%q), want %s", res.Status, res.Reason, tc.status)
			}
			got := b.progress.verdicts()
			if len(got) != len(tc.verdicts) {
				t.Fatalf("verdicts = %q, want %q", got, tc.verdicts)
			}
			for i, want := range tc.verdicts {
				if want == "*" && (got[i] == "held" || got[i] == "refused") || want != "*" && got[i] != want {
					t.Errorf("verdicts = %q, want %q", got, tc.verdicts)
					break
				}
			}
			if ledger := f.Ledger(); !slices.Equal(ledger, tc.transfers) {
				t.Errorf("ledger = %q, want %q", ledger, tc.transfers)
			}
			if n := f.Count("button", "Submit transfer"); n != len(tc.transfers) {
				t.Errorf("Submit transfer reached the app %d times, want %d", n, len(tc.transfers))
			}
			asked := tc.approver.proposals()
			if len(asked) != tc.asked {
				t.Errorf("approver asked %d times (%+v), want %d", len(asked), asked, tc.asked)
			}
			for _, p := range asked {
				want := agent.Proposal{Step: p.Step, Action: "click", Role: "button", Name: "Submit transfer", Risk: domain.RiskIrreversible}
				if p != want {
					t.Errorf("proposal = %+v, want %+v", p, want)
				}
			}
			if !slices.Equal(cfg.Grants, grantsBefore) {
				t.Errorf("the run spent the caller's grants: %+v, was %+v", cfg.Grants, grantsBefore)
			}
			// A held click is told to the model and recorded as evidence.
			if i := slices.Index(got, "held"); i >= 0 {
				if txt := b.userText(t, i+1); !strings.Contains(txt, heldNotice) {
					t.Errorf("the request after a held click lacks %q:\n%s", heldNotice, txt)
				}
				ev := evidenceFiles(t, cfg.DataDir)[filepath.Join("runs", runID, "events.jsonl")]
				if !strings.Contains(string(ev), `"type":"approval_required"`) {
					t.Errorf("events.jsonl records no approval_required:\n%s", ev)
				}
			}
		})
	}
}

// TestSovereignNeedsBudget: --sovereign delegates irreversible actions, so
// it is refused before anything starts unless the run has a deadline and a
// token or cost budget.
func TestSovereignNeedsBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		budget agent.Budget
		ok     bool
	}{
		{"StepsOnly", agent.Budget{MaxSteps: 5}, false},
		{"NoDeadline", agent.Budget{MaxSteps: 5, MaxTokens: 1000, MaxCost: 1}, false},
		{"DeadlineOnly", agent.Budget{MaxSteps: 5, Deadline: time.Minute}, false},
		{"DeadlineAndTokens", agent.Budget{MaxSteps: 5, Deadline: time.Minute, MaxTokens: 1000}, true},
		// The fake's model has no price here, so a cost budget cannot bind.
		{"DeadlineAndUnpricedCost", agent.Budget{MaxSteps: 5, Deadline: time.Minute, MaxCost: 0.5}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t) // no stubs: a refused configuration asks nothing
			f := transferApp()
			cfg := b.config(sim.New(f), "Transfer 250 to savings")
			cfg.Sovereign, cfg.Budget = true, tc.budget
			err := cfg.Validate()
			if tc.ok {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "--sovereign needs a deadline and a token budget") {
				t.Fatalf("Validate = %v, want the sovereign budget error", err)
			}
			res, runErr := agent.Run(b.ctx, cfg)
			if runErr == nil || res != nil {
				t.Errorf("Run = %+v, %v; want the same error and no result", res, runErr)
			}
			if len(f.Handled()) != 0 || b.requests() != 0 {
				t.Errorf("a refused configuration touched the app (%v) or the model (%d requests)", f.Handled(), b.requests())
			}
		})
	}
}

// TestAdvisoryAndConfirmEach: at autonomy 0 the first action is returned
// as a proposal and nothing is performed; at autonomy 1 every action needs
// an approval, and without an approver the run stops for one.
func TestAdvisoryAndConfirmEach(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		autonomy  int
		approver  *approver
		stubs     []modeltest.Stub
		status    agent.Status
		proposal  *agent.Proposal
		acted     int // actions after the opening navigation
		transfers []string
		asked     int
	}{
		{
			name: "AdvisoryType", autonomy: agent.LevelAdvisory,
			stubs:    []modeltest.Stub{reply(typeText(2, "250", "amount"))},
			status:   agent.StatusAdvisory,
			proposal: &agent.Proposal{Step: 1, Action: "type", Role: "textbox", Name: "Amount", Text: "250", Risk: domain.RiskSafe},
		},
		{
			name: "AdvisoryIrreversible", autonomy: agent.LevelAdvisory,
			approver: &approver{say: true}, // an approver changes nothing at level 0
			stubs:    []modeltest.Stub{reply(click(3))},
			status:   agent.StatusAdvisory,
			proposal: &agent.Proposal{Step: 1, Action: "click", Role: "button", Name: "Submit transfer", Risk: domain.RiskIrreversible},
		},
		{
			name: "ConfirmEachWithoutApprover", autonomy: agent.LevelConfirmEach,
			stubs:    []modeltest.Stub{reply(typeText(2, "250", "amount"))},
			status:   agent.StatusNeedsApproval,
			proposal: &agent.Proposal{Step: 1, Action: "type", Role: "textbox", Name: "Amount", Text: "250", Risk: domain.RiskSafe},
		},
		{
			name: "ConfirmEachApproverSaysYes", autonomy: agent.LevelConfirmEach,
			approver:  &approver{say: true},
			stubs:     []modeltest.Stub{reply(typeText(2, "250", "amount")), reply(click(3)), reply(giveUp("done"))},
			status:    agent.StatusGaveUp,
			acted:     2,
			transfers: []string{"transfer 250"},
			asked:     2,
		},
		{
			name: "ConfirmEachApproverSaysNo", autonomy: agent.LevelConfirmEach,
			approver: &approver{say: false},
			stubs:    []modeltest.Stub{reply(typeText(2, "250", "amount")), reply(giveUp("not allowed"))},
			status:   agent.StatusGaveUp,
			asked:    1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.stubs...)
			f := transferApp()
			cfg := b.config(sim.New(f), "Transfer 250 to savings")
			cfg.Autonomy = tc.autonomy
			if tc.approver != nil {
				cfg.Approver = tc.approver
			}
			res := b.run(t, cfg)

			if res.Status != tc.status {
				t.Errorf("Status = %s (%q), want %s", res.Status, res.Reason, tc.status)
			}
			switch {
			case tc.proposal == nil && res.Proposal != nil:
				t.Errorf("Proposal = %+v, want none", res.Proposal)
			case tc.proposal != nil && (res.Proposal == nil || *res.Proposal != *tc.proposal):
				t.Errorf("Proposal = %+v, want %+v", res.Proposal, tc.proposal)
			case tc.proposal != nil && !strings.Contains(res.Reason, tc.proposal.String()):
				t.Errorf("Reason %q does not show the proposal %q", res.Reason, tc.proposal.String())
			}
			if got := actedOn(f); len(got) != tc.acted {
				t.Errorf("the app received %+v, want %d actions after the opening navigation", got, tc.acted)
			}
			if ledger := f.Ledger(); !slices.Equal(ledger, tc.transfers) {
				t.Errorf("ledger = %q, want %q", ledger, tc.transfers)
			}
			if n := len(tc.approver.proposals()); n != tc.asked {
				t.Errorf("approver asked %d times, want %d", n, tc.asked)
			}
		})
	}
}

// TestIrreversibleByKeyPress: pressing Enter in a field of a form whose
// submit control is irreversible submits it, as a browser's implicit
// submission does (modelled here by the sim app's Enter handler on the
// field). At autonomy 3 with no approver and no grant, that must be held
// like the click it stands for.
func TestIrreversibleByKeyPress(t *testing.T) {
	t.Parallel()
	_ = ("fixed: internal/agent/perform.go:175 (loop.act) judges a press_key by policy.Classify(a, node), " +
		"and policy.Classify (internal/policy/risk.go) rates a key press by the name of the node it lands on " +
		"only for button/menuitem roles and as safe with no node: Enter in the Amount field (or an untargeted " +
		"Enter, which lands on the focused field) submits the \"Submit transfer\" form with no approval at " +
		"autonomy 3. Fix: classify Enter (and Space on a focused control) by what it activates: for a field, " +
		"the risk of its form's submit controls (the highest-risk button in the field's form or region); for " +
		"an untargeted press, the focused node from the snapshot (States.Focused), and elevated when none is " +
		"known; the guard then holds it like the click.")
	enter := func(el *int) string {
		return turnJSON(agent.Turn{Action: agent.KindPressKey, Element: el, Key: ptr("Enter")})
	}
	tests := []struct {
		name  string
		press string
	}{
		{"EnterInTheField", enter(ptr(2))},
		{"UntargetedEnterAfterTyping", enter(nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, reply(typeText(2, "250", "")), reply(tc.press), reply(giveUp("done")))
			f := transferApp()
			f.On("textbox", "Amount", func(ev *sim.Event) error {
				if ev.Type == domain.ActPressKey && ev.Key == "Enter" {
					ev.Append("transfer " + ev.Value("textbox", "Amount"))
				}
				return nil
			})
			res := b.run(t, b.config(sim.New(f), "Transfer 250 to savings"))
			if ledger := f.Ledger(); len(ledger) != 0 {
				t.Errorf("an Enter key press posted %q without an approval (verdicts %q, %s)", ledger, b.progress.verdicts(), res.Status)
			}
			if v := b.progress.verdicts(); len(v) < 2 || v[1] != "held" {
				t.Errorf("verdicts = %q, want the key press held", v)
			}
		})
	}
}

// blockingApprover never answers on its own: it waits for release and, when
// it honours its context, for the context to end.
type blockingApprover struct {
	honoursCtx bool
	release    chan struct{}
}

func (a *blockingApprover) Approve(ctx context.Context, _ agent.Proposal) (bool, error) {
	if !a.honoursCtx {
		<-a.release
		return false, nil
	}
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-a.release:
		return false, nil
	}
}

// TestApproverNeverAnswers: a run waiting for an approval that never comes
// still ends at its deadline, promptly, whether or not the approver honours
// its context (a person at a terminal does not).
func TestApproverNeverAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		honoursCtx bool
		bug        string
	}{
		{name: "HonoursContext", honoursCtx: true},
		{
			name: "IgnoresContext",
			bug: "BUG: internal/agent/guard.go:89 (guard.check) calls Approver.Approve synchronously, so an approver " +
				"that does not return when its ctx ends blocks the run past its deadline, the kill file and Ctrl-C " +
				"(\"stop the loop between and during actions\"); the CLI's promptApprover (internal/cli/discover.go:470) " +
				"ignores its ctx and blocks in fmt.Fscanln. Fix: in guard.check run Approve in a goroutine and " +
				"select on ctx.Done() (return ctx.Err(), which perform turns into a stop), and make promptApprover " +
				"honour ctx.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_ = tc.bug // fixed: the guard no longer waits on an approver past ctx
			b := setup(t, reply(click(3)))
			f := transferApp()
			ap := &blockingApprover{honoursCtx: tc.honoursCtx, release: make(chan struct{})}
			cfg := b.config(sim.New(f), "Transfer 250 to savings")
			cfg.Autonomy, cfg.Approver = agent.LevelConfirmRisky, ap
			cfg.Budget.Deadline = 300 * time.Millisecond

			type outcome struct {
				res *agent.Result
				err error
			}
			done := make(chan outcome, 1)
			start := time.Now()
			go func() {
				res, err := agent.Run(b.ctx, cfg)
				done <- outcome{res, err}
			}()
			var got outcome
			select {
			case got = <-done:
			// An approver that ignores ctx blocks until released: any
			// bound catches that, and a passing run never waits for it.
			case <-time.After(30 * time.Second):
				t.Errorf("the run still waits for the approver %s after its 300ms deadline", time.Since(start).Round(time.Millisecond))
				close(ap.release)
				got = <-done
			}
			if got.err != nil {
				t.Fatalf("Run: %v", got.err)
			}
			if got.res.Status != agent.StatusBudgetExceeded || got.res.Reason != "deadline reached" {
				t.Errorf("Status, Reason = %s, %q; want budget_exceeded, deadline reached", got.res.Status, got.res.Reason)
			}
			if n := f.Count("button", "Submit transfer"); n != 0 {
				t.Errorf("Submit transfer reached the app %d times without an approval", n)
			}
		})
	}
}
