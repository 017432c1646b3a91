package replay_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface/sim"
)

// quickApp serves testdata/quick.yaml: a search screen and a details
// screen, both signed on and linking back to the search; the details show
// the member searched for in "Member shown" (or, with stale, the member of
// the first search: a search that did not change the record). Screen
// "signedout" has the link but no signed-on banner.
func quickApp(stale bool) *sim.Flow {
	signed := sim.Node{Role: "text", Name: "Signed in as teller"}
	link := sim.Node{Role: "link", Name: "Member Search", Frame: "nav"}
	f := sim.NewFlow(base,
		sim.Screen{Name: "search", Title: "Member Search", Nodes: []sim.Node{
			link, signed,
			{Role: "heading", Name: "Member Search"},
			{Role: "textbox", Name: "Member number"},
			{Role: "button", Name: "Search"},
		}},
		sim.Screen{Name: "details", Title: "Member Details", Nodes: []sim.Node{
			link, signed,
			{Role: "heading", Name: "Member Details"},
			{Role: "textbox", Name: "Member shown"},
			{Role: "cell", Name: "$1,234.56", Row: "Savings Balance"},
		}},
		sim.Screen{Name: "notfound", Title: "Member Search", Nodes: []sim.Node{
			link, signed,
			{Role: "heading", Name: "Member Search"},
			{Role: "text", Name: "Member not found"},
		}},
		sim.Screen{Name: "signedout", Title: "Sign on", Nodes: []sim.Node{
			link,
			{Role: "heading", Name: "Sign on"},
		}},
	)
	first := ""
	f.On("link", "Member Search", sim.Goto("search"))
	f.On("button", "Search", func(ev *sim.Event) error {
		n := ev.Value("textbox", "Member number")
		if n == "99999" {
			return ev.Goto("notfound")
		}
		if first == "" {
			first = n
		}
		if stale {
			n = first
		}
		if err := ev.Goto("details"); err != nil {
			return err
		}
		return ev.Set("textbox", "Member shown", n)
	})
	return f
}

// navigations counts the navigate actions the flow handled.
func navigations(f *sim.Flow) int {
	n := 0
	for _, h := range f.Handled() {
		if h.Type == domain.ActNavigate {
			n++
		}
	}
	return n
}

// eventTypes returns the types of a run's events, and the step of its
// reentered event ("" when none).
func eventTypes(t *testing.T, b *testBundle) ([]string, string) {
	t.Helper()
	var types []string
	step := ""
	for _, e := range readEvents(t, b.opts.DataDir+"/runs/"+b.opts.RunID) {
		types = append(types, e.Type)
		if e.Type == "reentered" {
			step = e.StepID
		}
	}
	return types, step
}

// TestReentry: on a warm session whose screen satisfies the reentry
// condition, a run starts at the reentry step without navigating (one
// dispatch fewer) and says so in a typed event; on a cold session, or when
// the condition does not hold, or a declared outcome is on screen, it
// enters at the entrypoint as usual.
func TestReentry(t *testing.T) {
	t.Parallel()
	all := []string{"open_search", "enter_member", "search", "read_balance"}
	rows := []struct {
		name string
		// before is pushed onto the flow before the run (nil: about:blank).
		before   []sim.Effect
		warm     bool
		input    string
		reenters bool
		declined string // a reason the run declined reentry with, "" for none
		want     want
	}{
		{name: "warm, details of another member on screen: reenters", before: []sim.Effect{sim.Goto("details")}, warm: true, input: "23456",
			reenters: true, want: want{status: domain.StatusSuccess, dispatches: 3, steps: all, outputs: map[string]string{"balance": "1234.56"}}},
		{name: "warm, search form on screen: reenters", before: []sim.Effect{sim.Goto("search")}, warm: true, input: "23456",
			reenters: true, want: want{status: domain.StatusSuccess, dispatches: 3, steps: all}},
		{name: "cold, search form on screen: enters at the entrypoint", before: []sim.Effect{sim.Goto("search")}, input: "23456",
			want: want{status: domain.StatusSuccess, dispatches: 4, steps: all}},
		{name: "warm, condition false (not signed on): enters", before: []sim.Effect{sim.Goto("signedout")}, warm: true, input: "23456",
			declined: "the reentry condition does not hold", want: want{status: domain.StatusSuccess, dispatches: 4, steps: all}},
		{name: "warm, an earlier run's outcome on screen: enters", before: []sim.Effect{sim.Goto("notfound")}, warm: true, input: "23456",
			declined: "outcome member_not_found is on screen", want: want{status: domain.StatusSuccess, dispatches: 4, steps: all}},
		{name: "warm, blank session: enters", warm: true, input: "23456",
			declined: "the session shows another origin", want: want{status: domain.StatusSuccess, dispatches: 4, steps: all}},
		{name: "warm, undeclared dialog on screen: enters", before: []sim.Effect{sim.Goto("search"), sim.OpenDialog("alert", "Session notice")}, warm: true, input: "23456",
			declined: `an undeclared dialog "Session notice" is open`, want: want{status: domain.StatusSuccess, dispatches: 4, steps: all}},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, spec{cap: "quick.yaml", app: func() *sim.Flow { return quickApp(false) }, inputs: member(tc.input)})
			if len(tc.before) > 0 {
				if err := b.flow.Push(tc.before...); err != nil {
					t.Fatal(err)
				}
			}
			b.opts.Warm = tc.warm
			rec := b.run(t)
			checkRecord(t, rec, tc.want)
			checkEvidence(t, b, rec)
			types, step := eventTypes(t, b)
			if tc.reenters != (step == "open_search") {
				t.Errorf("reentered at %q, want reentry %v (events %q)", step, tc.reenters, types)
			}
			if got := navigations(b.flow); (got == 0) != tc.reenters {
				t.Errorf("%d navigations, reentered %v", got, tc.reenters)
			}
			declined := slices.Contains(types, "reentry_declined")
			if declined != (tc.declined != "") || (!tc.warm && declined) {
				t.Errorf("reentry_declined %v, want reason %q (events %q)", declined, tc.declined, types)
			}
			if tc.declined != "" {
				checkDeclineReason(t, b, tc.declined)
			}
			if rec.Status == domain.StatusSuccess {
				if got := rec.Outputs["balance"]; got == nil {
					t.Error("no balance")
				}
			}
		})
	}
}

func checkDeclineReason(t *testing.T, b *testBundle, want string) {
	t.Helper()
	for _, e := range readEvents(t, b.opts.DataDir+"/runs/"+b.opts.RunID) {
		if e.Type == "reentry_declined" {
			if r, _ := e.Data["reason"].(string); !strings.HasPrefix(r, want) {
				t.Errorf("declined with %q, want %q", r, want)
			}
			return
		}
	}
}

// TestReentrySecondRun: two runs on one session: the first (cold) enters
// at the entrypoint; the second (warm) starts on the details the first
// left, makes one dispatch fewer and reads the second member; when the
// reentered search does not change the record (the details still show the
// first member), the identity check fails the run closed: no output.
func TestReentrySecondRun(t *testing.T) {
	t.Parallel()
	for _, stale := range []bool{false, true} {
		name := map[bool]string{false: "fresh result", true: "stale result fails closed"}[stale]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, spec{cap: "quick.yaml", app: func() *sim.Flow { return quickApp(stale) }, inputs: member("12345")})
			first := b.run(t)
			checkRecord(t, first, want{status: domain.StatusSuccess, dispatches: 4, outputs: map[string]string{"balance": "1234.56"}})
			b.opts.Warm, b.opts.RunID, b.opts.Inputs = true, "run-2", member("23456")
			second := b.run(t)
			checkEvidence(t, b, second)
			if _, step := eventTypes(t, b); step != "open_search" {
				t.Errorf("the second run did not reenter (reentered at %q)", step)
			}
			if navigations(b.flow) != 1 {
				t.Errorf("%d navigations over two runs, want 1 (the first run's)", navigations(b.flow))
			}
			if !stale {
				checkRecord(t, second, want{status: domain.StatusSuccess, dispatches: 3, outputs: map[string]string{"balance": "1234.56"}})
				return
			}
			checkRecord(t, second, want{status: domain.StatusFailed, code: domain.CodeUnexpectedState, dispatches: 3,
				steps: []string{"open_search", "enter_member", "search"}})
		})
	}
}
