package agent_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/modeltest"
	"github.com/cuahq/cua/internal/surface/sim"
)

// TestBudgets: each budget ends the run as budget_exceeded between steps,
// with the count that tripped it in the reason; the deadline also ends a
// model call in flight, promptly.
func TestBudgets(t *testing.T) {
	t.Parallel()
	big := model.Usage{InputTokens: 500, OutputTokens: 100}
	tests := []struct {
		name    string
		stubs   []modeltest.Stub
		budget  agent.Budget
		prices  map[string]agent.Price
		reason  string
		steps   int
		tokens  int
		clicks  int
		cost    float64
		atLeast time.Duration // the run must not end before this
	}{
		{
			name:   "MaxSteps",
			stubs:  []modeltest.Stub{reply(click(3)).Always()},
			budget: agent.Budget{MaxSteps: 3},
			reason: "max steps 3 reached",
			steps:  3, tokens: 3 * usage.Total(), clicks: 3,
		},
		{
			name:   "MaxTokens",
			stubs:  []modeltest.Stub{modeltest.Reply(click(3), big).Always()},
			budget: agent.Budget{MaxSteps: 10, MaxTokens: 1000},
			reason: "max tokens 1000 reached (1200 used)",
			steps:  2, tokens: 1200, clicks: 2,
		},
		{
			// A broken answer that crosses the budget gets no corrective
			// re-prompt: the budget is checked before asking again.
			name:   "MaxTokensStopsTheCorrection",
			stubs:  []modeltest.Stub{modeltest.Reply("not json", big)},
			budget: agent.Budget{MaxSteps: 10, MaxTokens: 500},
			reason: "max tokens 500 reached (600 used)",
			steps:  0, tokens: 600,
		},
		{
			// $1000 per million tokens: 120 tokens cost $0.12 a step.
			name:   "MaxCost",
			stubs:  []modeltest.Stub{reply(click(3)).Always()},
			budget: agent.Budget{MaxSteps: 10, MaxCost: 0.30},
			prices: map[string]agent.Price{modeltest.FakeModel: {Input: 1000, Output: 1000}},
			reason: "max cost $0.3000 reached ($0.3600 used)",
			steps:  3, tokens: 3 * usage.Total(), clicks: 3, cost: 0.36,
		},
		{
			name:   "MaxCostUnpricedModelIsNotACost",
			stubs:  []modeltest.Stub{reply(click(3)), reply(click(3)), reply(giveUp("enough"))},
			budget: agent.Budget{MaxSteps: 10, MaxCost: 0.0001},
			prices: map[string]agent.Price{"some-other-model": {Input: 1000, Output: 1000}},
			steps:  3, tokens: 3 * usage.Total(), clicks: 2,
		},
		{
			name:    "DeadlineDuringAModelCall",
			stubs:   []modeltest.Stub{modeltest.Hang()},
			budget:  agent.Budget{MaxSteps: 10, Deadline: 300 * time.Millisecond},
			reason:  "deadline reached",
			atLeast: 300 * time.Millisecond,
		},
		{
			// Two steps must land before the deadline: about 150 ms
			// here, so 3 s leaves room for a loaded CI machine.
			name:   "DeadlineAfterSomeSteps",
			stubs:  []modeltest.Stub{reply(click(3)), reply(click(3)), modeltest.Hang()},
			budget: agent.Budget{MaxSteps: 10, Deadline: 3 * time.Second},
			reason: "deadline reached",
			steps:  2, tokens: 2 * usage.Total(), clicks: 2,
			atLeast: 3 * time.Second,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.stubs...)
			f := refreshApp()
			cfg := b.config(sim.New(f), "Refresh the dashboard")
			cfg.Budget, cfg.Prices = tc.budget, tc.prices
			start := time.Now()
			res := b.run(t, cfg)
			elapsed := time.Since(start)

			want := agent.StatusBudgetExceeded
			if tc.reason == "" {
				want = agent.StatusGaveUp
			}
			if res.Status != want || (tc.reason != "" && res.Reason != tc.reason) {
				t.Errorf("Status, Reason = %s, %q; want %s, %q", res.Status, res.Reason, want, tc.reason)
			}
			if res.Steps != tc.steps || res.Tokens != tc.tokens {
				t.Errorf("Steps, Tokens = %d, %d; want %d, %d", res.Steps, res.Tokens, tc.steps, tc.tokens)
			}
			if n := f.Count("button", "Refresh"); n != tc.clicks {
				t.Errorf("Refresh clicked %d times, want %d", n, tc.clicks)
			}
			if math.Abs(res.Cost-tc.cost) > 1e-9 || res.Priced != (tc.cost > 0) {
				t.Errorf("Cost, Priced = %v, %v; want %v, %v", res.Cost, res.Priced, tc.cost, tc.cost > 0)
			}
			if tc.atLeast > 0 {
				if elapsed < tc.atLeast {
					t.Errorf("the run ended after %s, before its deadline %s", elapsed, tc.atLeast)
				}
				// A run that waited out the hung call would end at the
				// model client's own 10 s timeout: 5 s past the deadline
				// still tells the two apart on a slow machine.
				if elapsed > tc.atLeast+5*time.Second {
					t.Errorf("the run ended %s after its deadline %s: not promptly", elapsed-tc.atLeast, tc.atLeast)
				}
			}
		})
	}
}

// TestStopped: a kill file that appears mid-run, or the caller's context
// ending, stops the run promptly, even while a model call hangs.
func TestStopped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		kill   bool // the app's button creates the kill file
		cancel bool // the caller cancels after the first step
		reason string
	}{
		{"KillFileAppearsMidRun", true, false, "kill file present"},
		{"CallerInterrupts", false, true, "interrupted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, reply(click(3)), modeltest.Hang())
			killFile := filepath.Join(t.TempDir(), "STOP")
			ctx, cancel := context.WithCancel(b.ctx)
			defer cancel()
			f := refreshApp()
			f.On("button", "Refresh", func(*sim.Event) error {
				if tc.kill {
					return os.WriteFile(killFile, nil, 0o600)
				}
				if tc.cancel {
					time.AfterFunc(100*time.Millisecond, cancel)
				}
				return nil
			})
			cfg := b.config(sim.New(f), "Refresh the dashboard")
			cfg.KillFile = killFile
			start := time.Now()
			res := b.runIn(t, ctx, cfg)

			if res.Status != agent.StatusStopped || res.Reason != tc.reason {
				t.Errorf("Status, Reason = %s, %q; want stopped, %q", res.Status, res.Reason, tc.reason)
			}
			if res.Steps != 1 || f.Count("button", "Refresh") != 1 {
				t.Errorf("Steps = %d, clicks = %d; want 1 of each", res.Steps, f.Count("button", "Refresh"))
			}
			// A stop that waited for the hung model call would end at the
			// model client's 10 s timeout; 5 s tells the two apart even on
			// a loaded machine.
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("stopping took %s, want well under the model call's 10s timeout", elapsed)
			}
		})
	}
}

// TestKillFilePresentAtStart: a kill file that is already there stops the
// run before its first model call is answered.
func TestKillFilePresentAtStart(t *testing.T) {
	t.Parallel()
	b := setup(t, modeltest.Hang())
	killFile := filepath.Join(t.TempDir(), "STOP")
	if err := os.WriteFile(killFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f := refreshApp()
	cfg := b.config(sim.New(f), "Refresh the dashboard")
	cfg.KillFile = killFile
	res := b.run(t, cfg)
	if res.Status != agent.StatusStopped || res.Reason != "kill file present" || res.Steps != 0 {
		t.Errorf("Status, Reason, Steps = %s, %q, %d; want stopped, kill file present, 0", res.Status, res.Reason, res.Steps)
	}
	if got := actedOn(f); len(got) != 0 {
		t.Errorf("the app received %v after the opening navigation", got)
	}
}
