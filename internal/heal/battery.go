package heal

import (
	"context"
	"fmt"
	"slices"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
)

// RunFunc runs l once, attended, against the application of the eval with
// inputs, and returns its record. Eval runs never write proposals.
type RunFunc func(ctx context.Context, l *capability.Loaded, inputs map[string]string) (*domain.RunRecord, error)

// Case is one case of a battery: how MemberDesk is set up, which member is
// asked for, and how the draft's run is judged.
type Case struct {
	Battery string // "drift" or "fault"
	Name    string
	Want    string
	Member  string
	// Setup puts MemberDesk in the case's variant or fault, after a reset.
	Setup func(ctx context.Context, app *mockapp.Client) error
	// Answer: the run must succeed with the member's values; otherwise it
	// must give no wrong answer (Refuse: it must not succeed at all).
	Answer, Refuse bool
}

// truth is what MemberDesk's fixture holds for the members the batteries
// ask for.
var truth = map[string]map[string]string{
	"12345": {"savings_balance": "1234.56", "status": "Active"},
	"56789": {"savings_balance": "12345678.90", "status": "Active"},
}

// Batteries are MemberDesk's drift battery (the variant that caused the
// proposal must answer right; variants a, b and c must give no wrong
// answer) and its fault battery (ambiguity, a wrong member's record, a
// stale record, an undeclared dialog: each refused, never answered
// wrongly). cause is the drift the halted run met (nil: none); the fault
// cases other than ambiguity run under it, so the draft's locator applies.
func Batteries(cause *mockapp.DriftSpec) []Case {
	under := func(extra func(ctx context.Context, app *mockapp.Client) error) func(ctx context.Context, app *mockapp.Client) error {
		return func(ctx context.Context, app *mockapp.Client) error {
			if cause != nil {
				if _, err := app.SetDrift(ctx, *cause); err != nil {
					return err
				}
			}
			if extra == nil {
				return nil
			}
			return extra(ctx, app)
		}
	}
	variant := func(v string) func(ctx context.Context, app *mockapp.Client) error {
		return func(ctx context.Context, app *mockapp.Client) error { return app.SetVariant(ctx, v) }
	}
	arm := func(fault string) func(ctx context.Context, app *mockapp.Client) error {
		return under(func(ctx context.Context, app *mockapp.Client) error { return app.Arm(ctx, fault, 1, 0) })
	}
	causeName := "cause (no drift)"
	if cause != nil {
		causeName = fmt.Sprintf("cause (%s %s seed %d)", cause.Kind, cause.Change, cause.Seed)
	}
	dup := int64(slices.Index(mockapp.DriftChanges, "duplicate_search_button") + 1)
	return []Case{
		{Battery: "drift", Name: causeName, Want: "SUCCESS with the member's values", Member: "12345", Setup: under(nil), Answer: true},
		{Battery: "drift", Name: "variant a", Want: "no wrong answer", Member: "12345", Setup: variant(mockapp.VariantA)},
		{Battery: "drift", Name: "variant b", Want: "no wrong answer", Member: "12345", Setup: variant(mockapp.VariantB)},
		{Battery: "drift", Name: "variant c", Want: "no wrong answer", Member: "12345", Setup: variant(mockapp.VariantC)},
		{Battery: "fault", Name: "ambiguity (duplicate_search_button)", Want: "refused", Member: "12345", Refuse: true,
			Setup: func(ctx context.Context, app *mockapp.Client) error {
				_, err := app.SetDrift(ctx, mockapp.DriftSpec{Kind: mockapp.DriftSemantic, Change: "duplicate_search_button", Seed: dup})
				return err
			}},
		{Battery: "fault", Name: "wrong member (another member's record first)", Want: "no wrong answer", Member: "56789", Setup: arm(mockapp.FaultStaleResult)},
		{Battery: "fault", Name: "stale result", Want: "no wrong answer", Member: "12345", Setup: arm(mockapp.FaultStaleResult)},
		{Battery: "fault", Name: "undeclared dialog", Want: "refused", Member: "12345", Refuse: true, Setup: arm(mockapp.FaultUndeclaredDialog)},
	}
}

// Evaluate runs l through every case on a freshly reset MemberDesk and
// judges each run; the eval passes when every case does. app is reset
// once more at the end.
func Evaluate(ctx context.Context, app *mockapp.Client, l *capability.Loaded, cases []Case, run RunFunc, by string) (Eval, error) {
	ev := Eval{By: by, Passed: true, Cases: []CaseRun{}}
	defer app.Reset(context.WithoutCancel(ctx)) //nolint:errcheck // best effort: leave MemberDesk as found
	for _, c := range cases {
		if err := app.Reset(ctx); err != nil {
			return ev, fmt.Errorf("eval %s: reset MemberDesk: %w", c.Name, err)
		}
		if err := c.Setup(ctx, app); err != nil {
			return ev, fmt.Errorf("eval %s: set up MemberDesk: %w", c.Name, err)
		}
		rec, err := run(ctx, l, map[string]string{"member_id": c.Member})
		if err != nil {
			return ev, fmt.Errorf("eval %s: %w", c.Name, err)
		}
		hits := 0
		if st, err := app.Drift(ctx); err == nil {
			hits = st.DecoyHits
		}
		cr := judge(c, rec, hits)
		ev.Passed = ev.Passed && cr.Passed
		ev.Cases = append(ev.Cases, cr)
	}
	return ev, nil
}

// judge decides one case from its run record and the decoy hits it caused.
func judge(c Case, rec *domain.RunRecord, hits int) CaseRun {
	cr := CaseRun{Battery: c.Battery, Name: c.Name, Want: c.Want, RunID: rec.RunID, Status: rec.Status, Code: string(rec.FailureCode)}
	want := truth[c.Member]
	right := rec.Status == domain.StatusSuccess
	for k, v := range want {
		if fmt.Sprint(rec.Outputs[k]) != v {
			right = false
		}
	}
	switch {
	case hits > 0:
		cr.Why = fmt.Sprintf("%d decoy hit(s): a wrong control was used", hits)
	case c.Answer && right:
		cr.Passed, cr.Why = true, "answered with the member's values"
	case c.Answer:
		cr.Why = fmt.Sprintf("ended %s %s, not the member's values", rec.Status, rec.FailureCode)
	case c.Refuse && rec.Status == domain.StatusSuccess:
		cr.Why = "answered where it must refuse"
	case c.Refuse:
		cr.Passed, cr.Why = true, fmt.Sprintf("refused: %s %s", rec.Status, rec.FailureCode)
	case rec.Status == domain.StatusSuccess && !right:
		cr.Why = fmt.Sprintf("a wrong answer: %v", rec.Outputs)
	case rec.Status == domain.StatusSuccess:
		cr.Passed, cr.Why = true, "answered with the member's values"
	default:
		cr.Passed, cr.Why = true, fmt.Sprintf("no answer: %s %s", rec.Status, rec.FailureCode)
	}
	return cr
}
