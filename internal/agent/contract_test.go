package agent_test

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/model/modeltest"
	"github.com/cuahq/cua/internal/surface/sim"
)

// TestInvalidTurns: an answer that breaks the contract gets exactly one
// corrective re-prompt carrying the reason; a second broken answer ends the
// run as aborted, with no step taken and nothing dispatched.
func TestInvalidTurns(t *testing.T) {
	t.Parallel()

	noElement := turnJSON(agent.Turn{Action: agent.KindClick})
	tests := []struct {
		name       string
		bad        string
		correction string // what the second request's correction must say
	}{
		{"ProseNotJSON", "I will click the Refresh button now.", "the answer is not JSON"},
		{"TruncatedJSON", `{"thought":"x","action":"cli`, "the answer is not JSON"},
		{"UnknownAction", strings.Replace(click(3), `"click"`, `"dance"`, 1), "the answer breaks the contract"},
		{"MissingProperties", `{"thought":"x","action":"click","element":3}`, "the answer breaks the contract"},
		{"ElementZero", turnJSON(agent.Turn{Action: agent.KindClick, Element: ptr(0)}), "the answer breaks the contract"},
		{"ClickWithoutElement", noElement, "action click needs element"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, reply(tc.bad), reply(tc.bad))
			f := refreshApp()
			res := b.run(t, b.config(sim.New(f), "Refresh the dashboard"))

			if res.Status != agent.StatusAborted || !strings.Contains(res.Reason, "broke the contract twice") {
				t.Errorf("Status, Reason = %s, %q; want aborted, \"…broke the contract twice…\"", res.Status, res.Reason)
			}
			if !strings.Contains(res.Reason, tc.correction) {
				t.Errorf("Reason %q does not say why: want %q", res.Reason, tc.correction)
			}
			if res.Steps != 0 {
				t.Errorf("Steps = %d, want 0 (no turn was ever valid)", res.Steps)
			}
			if want := 2 * usage.Total(); res.Tokens != want {
				t.Errorf("Tokens = %d, want %d (both answers are charged)", res.Tokens, want)
			}
			if n := b.requests(); n != 2 {
				t.Fatalf("requests = %d, want 2 (one corrective re-prompt, no more)", n)
			}
			if first := b.userText(t, 0); strings.Contains(first, "Correction:") {
				t.Errorf("the first request already carries a correction:\n%s", first)
			}
			second := b.userText(t, 1)
			for _, want := range []string{"Correction:\nYour previous answer was refused: " + tc.correction, "Answer again with one JSON object"} {
				if !strings.Contains(second, want) {
					t.Errorf("the corrective re-prompt lacks %q:\n%s", want, second)
				}
			}
			if got := actedOn(f); len(got) != 0 {
				t.Errorf("the app received %v, want nothing after the opening navigation", got)
			}
		})
	}
}

// TestInvalidThenValidTurnContinues: one broken answer followed by a valid
// one is not fatal: the run goes on, the correction is not repeated, and
// the valid click reaches the app.
func TestInvalidThenValidTurnContinues(t *testing.T) {
	t.Parallel()
	b := setup(t,
		reply("Sure! Let me click Refresh."),
		reply(click(3)),
		reply(giveUp("nothing changes")),
	)
	f := refreshApp()
	res := b.run(t, b.config(sim.New(f), "Refresh the dashboard"))

	if res.Status != agent.StatusGaveUp || res.Reason != "nothing changes" {
		t.Errorf("Status, Reason = %s, %q; want gave_up, %q", res.Status, res.Reason, "nothing changes")
	}
	if res.Steps != 2 {
		t.Errorf("Steps = %d, want 2 (the refused answer is not a step)", res.Steps)
	}
	if want := 3 * usage.Total(); res.Tokens != want {
		t.Errorf("Tokens = %d, want %d", res.Tokens, want)
	}
	if !strings.Contains(b.userText(t, 1), "Correction:") {
		t.Error("the second request carries no correction")
	}
	if third := b.userText(t, 2); strings.Contains(third, "Correction:") {
		t.Errorf("the correction outlived the valid answer:\n%s", third)
	}
	if n := f.Count("button", "Refresh"); n != 1 {
		t.Errorf("Refresh clicked %d times, want 1", n)
	}
}

// TestHallucinatedElement: an element number that is not on the list is
// refused with a notice the model reads next turn; nothing reaches the
// app; the recovery ladder (retry, alternate, re-plan) ends the run as
// aborted on the fourth failure in a row, or the step budget ends it first.
func TestHallucinatedElement(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		maxSteps int
		status   agent.Status
		reason   string
		steps    int
	}{
		{"LadderAborts", 12, agent.StatusAborted, "4 failed actions in a row", 4},
		{"BudgetFirst", 2, agent.StatusBudgetExceeded, "max steps 2 reached", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, reply(click(999)).Always())
			f := refreshApp()
			cfg := b.config(sim.New(f), "Refresh the dashboard")
			cfg.Budget.MaxSteps = tc.maxSteps
			res := b.run(t, cfg)

			if res.Status != tc.status || res.Reason != tc.reason {
				t.Errorf("Status, Reason = %s, %q; want %s, %q", res.Status, res.Reason, tc.status, tc.reason)
			}
			if res.Steps != tc.steps || b.requests() != tc.steps {
				t.Errorf("Steps = %d, requests = %d; want %d of each", res.Steps, b.requests(), tc.steps)
			}
			if want := tc.steps * usage.Total(); res.Tokens != want {
				t.Errorf("Tokens = %d, want %d", res.Tokens, want)
			}
			for i, v := range b.progress.verdicts() {
				if v != "refused" {
					t.Errorf("step %d verdict = %q, want refused", i+1, v)
				}
			}
			if got := actedOn(f); len(got) != 0 {
				t.Errorf("the app received %v, want nothing after the opening navigation", got)
			}
			for _, st := range res.Trace.Steps[1:] {
				t.Errorf("trace holds a step for a hallucinated element: %+v", st)
			}
			const notice = "Notice: element [999] does not exist: the list has 3 elements"
			for i := 1; i < tc.steps; i++ {
				if txt := b.userText(t, i); !strings.Contains(txt, notice) {
					t.Errorf("request %d lacks %q:\n%s", i+1, notice, txt)
				}
			}
			if tc.steps >= 4 {
				for i, want := range map[int]string{
					2: "Notice: the last action failed: choose a different element or approach",
					3: "Notice: several actions failed: re-plan from the current screen",
				} {
					if txt := b.userText(t, i); !strings.Contains(txt, want) {
						t.Errorf("request %d lacks the ladder's %q", i+1, want)
					}
				}
			}
		})
	}
}

// TestModelUnavailable: a provider that keeps failing after the adapter's
// retries ends the run as aborted, promptly, not as a hang or a crash.
func TestModelUnavailable(t *testing.T) {
	t.Parallel()
	b := setup(t, modeltest.Fail(503, "overloaded").Always())
	f := refreshApp()
	res := b.run(t, b.config(sim.New(f), "Refresh the dashboard"))
	if res.Status != agent.StatusAborted || !strings.HasPrefix(res.Reason, "model: ") {
		t.Errorf("Status, Reason = %s, %q; want aborted, \"model: …\"", res.Status, res.Reason)
	}
	if n := b.requests(); n != 2 {
		t.Errorf("requests = %d, want 2 (one try and MaxRetries 1)", n)
	}
	if res.Steps != 0 || len(actedOn(f)) != 0 {
		t.Errorf("Steps = %d, acted on %v; want none", res.Steps, actedOn(f))
	}
	if res.Trace == nil || len(res.Trace.Steps) != 1 || res.Trace.Steps[0].Action.Type != domain.ActNavigate {
		t.Errorf("trace = %+v, want only the opening navigation", res.Trace)
	}
}

// TestNavigation: addresses under the target read "{base_url}…" both ways;
// a navigation off the allowed domains is denied by policy before it
// reaches the app (and a model insisting on it is stopped), and an app
// that lands off target ends the run instead of showing the page.
func TestNavigation(t *testing.T) {
	t.Parallel()
	nav := func(u string) string { return turnJSON(agent.Turn{Action: agent.KindNavigate, URL: ptr(u)}) }
	tests := []struct {
		name     string
		stubs    []modeltest.Stub
		status   agent.Status
		reason   string // prefix
		verdicts []string
		screen   string // where the app ends
	}{
		{
			name:     "BaseURLPlaceholder",
			stubs:    []modeltest.Stub{reply(nav("{base_url}/details")), reply(giveUp("seen"))},
			status:   agent.StatusGaveUp,
			reason:   "seen",
			verdicts: []string{"ok", "gave up"},
			screen:   "details",
		},
		{
			name:     "OffTargetDenied",
			stubs:    []modeltest.Stub{reply(nav("https://evil.example/collect")).Always()},
			status:   agent.StatusStuck,
			reason:   "the same navigate was chosen 6 times",
			verdicts: []string{"denied", "denied", "denied", "refused", "refused", "stuck"},
			screen:   "search",
		},
		{
			name:     "LandsOffTarget",
			stubs:    []modeltest.Stub{reply(click(3))},
			status:   agent.StatusAborted,
			reason:   "observe: ",
			verdicts: []string{"unverified"},
			screen:   "phish",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.stubs...)
			f := sim.NewFlow(base,
				sim.Screen{Name: "search", Title: "Member Search", Nodes: []sim.Node{
					{Role: "heading", Name: "Member Search"},
					{Role: "link", Name: "Details"},
					{Role: "button", Name: "Continue"},
				}},
				sim.Screen{Name: "details", Title: "Member Details", Nodes: []sim.Node{
					{Role: "heading", Name: "Member Details"},
					{Role: "cell", Name: "Active", Row: "Status"},
				}},
				sim.Screen{Name: "phish", Title: "Sign in again", URL: "https://evil.example/phish", Nodes: []sim.Node{
					{Role: "heading", Name: "Sign in again"},
					{Role: "textbox", Name: "Password", Password: true},
					{Role: "button", Name: "Sign in"},
				}},
			)
			f.On("button", "Continue", sim.Goto("phish"))
			res := b.run(t, b.config(sim.New(f), "Open the member details"))

			if res.Status != tc.status || !strings.HasPrefix(res.Reason, tc.reason) {
				t.Errorf("Status, Reason = %s, %q; want %s, %q…", res.Status, res.Reason, tc.status, tc.reason)
			}
			if got := b.progress.verdicts(); strings.Join(got, ",") != strings.Join(tc.verdicts, ",") {
				t.Errorf("verdicts = %q, want %q", got, tc.verdicts)
			}
			if s := f.Screen(); s != tc.screen {
				t.Errorf("the app shows %q, want %q", s, tc.screen)
			}
			first := b.userText(t, 0)
			if !strings.Contains(first, `page url="{base_url}/search"`) || strings.Contains(first, base) {
				t.Errorf("the observation shows the real target address:\n%s", first)
			}
			for i, r := range b.srv.Requests() {
				if strings.Contains(string(r.Body), "Sign in again") {
					t.Errorf("request %d shows the off-target page", i+1)
				}
			}
			for _, h := range f.Handled() {
				if strings.Contains(h.URL, "evil.example") {
					t.Errorf("the app was asked to navigate to %s", h.URL)
				}
			}
		})
	}
}
