package runtime_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface/sim"
)

// reachingApp is the login app whose "Go" also presses a control the
// snapshot does not show (as a label forwards its click, or a button hides
// from the accessibility tree): the surface reports it, and policy judges it.
type reachingApp struct{ *loginApp }

var _ sim.Reacher = reachingApp{}

func (a reachingApp) Reaches(act policy.AuthorizedAction) []domain.Node {
	if n := act.Node(); n != nil && n.Name == "Go" {
		return []domain.Node{{Role: "button", Name: "Transfer now"}}
	}
	return nil
}

// TestActRefusedByWhatItReaches: a dispatch the surface refuses because the
// action reaches a control above its authorization ends POLICY_DENIED
// naming that control, records a policy_denied event (not a failed
// dispatch), and the app never sees the action.
func TestActRefusedByWhatItReaches(t *testing.T) {
	t.Parallel()
	app := newLoginApp()
	pol, err := policy.New(policy.Config{Profile: policy.ProfileAutomation, AllowedDomains: []string{"app.test"}})
	if err != nil {
		t.Fatal(err)
	}
	events := &sink{}
	d, err := runtime.New(runtime.Config{Surface: sim.New(reachingApp{app}), Policy: pol, Lease: hitl.NewLease("a"), Holder: "a",
		Redactor: redact.New(), Events: events})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Act(t.Context(), snap, clickGo(), "")
	wantCode(t, err, domain.CodePolicyDenied)
	if !policy.IsDenied(err) || !strings.Contains(err.Error(), `button "Transfer now"`) {
		t.Errorf("the refusal does not name the control it reaches: %v", err)
	}
	if len(app.got) != 0 {
		t.Errorf("the app handled %+v", app.got)
	}
	if e := events.last(t, "policy_denied"); !strings.Contains(fmt.Sprint(e.Payload), "Transfer now") {
		t.Errorf("policy_denied event %+v does not name the control", e.Payload)
	}
	for _, typ := range events.types() {
		if typ == "dispatch_failed" || typ == "action_dispatched" {
			t.Errorf("event %s recorded for a refused action", typ)
		}
	}
}
