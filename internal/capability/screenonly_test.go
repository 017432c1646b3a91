package capability

import (
	"reflect"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// TestScreenOnlyWrites: consecutive irreversible steps are one write,
// covered by a contract on any of them; a safe or elevated step between
// two irreversible ones makes two writes; a for_each body is checked on its
// own; a capability with no irreversible step has none.
func TestScreenOnlyWrites(t *testing.T) {
	t.Parallel()
	contract := []domain.EffectContract{{RecordWritten: &domain.RecordWritten{Via: "x.history@1.0.0", Count: 1}}}
	step := func(id string, risk domain.Risk, effects bool) domain.Step {
		s := domain.Step{ID: id, Action: domain.ActClick, Risk: risk}
		if effects {
			s.Effects = contract
		}
		return s
	}
	irr, safe := domain.RiskIrreversible, domain.RiskSafe
	for _, tc := range []struct {
		name  string
		steps []domain.Step
		want  []ScreenOnlyWrite
	}{
		{"no irreversible step", []domain.Step{step("a", safe, false), step("b", domain.RiskElevated, false)}, nil},
		{"submit and confirm, contract on confirm", []domain.Step{step("review", safe, false), step("submit", irr, false), step("confirm", irr, true), step("read", safe, false)}, nil},
		{"submit and confirm, contract on submit", []domain.Step{step("submit", irr, true), step("confirm", irr, false)}, nil},
		{"submit and confirm, no contract", []domain.Step{step("review", safe, false), step("submit", irr, false), step("confirm", irr, false), step("read", safe, false)},
			[]ScreenOnlyWrite{{Steps: []string{"submit", "confirm"}, Path: "steps[2]", ptr: "/steps/2"}}},
		{"two writes, one contracted", []domain.Step{step("w1", irr, true), step("between", domain.RiskElevated, false), step("w2", irr, false)},
			[]ScreenOnlyWrite{{Steps: []string{"w2"}, Path: "steps[2]", ptr: "/steps/2"}}},
		{"a write in a loop body", []domain.Step{step("open", safe, false), {ID: "each", ForEach: &domain.ForEach{Input: "rows", As: "row",
			Steps: []domain.Step{step("fill", safe, false), step("post", irr, false)}}}},
			[]ScreenOnlyWrite{{Steps: []string{"post"}, Path: "steps[1].for_each.steps[1]", ptr: "/steps/1/for_each/steps/1"}}},
	} {
		got := ScreenOnlyWrites(&domain.Capability{Steps: tc.steps})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	w := ScreenOnlyWrite{Steps: []string{"submit", "confirm"}, Path: "steps[7]"}
	if got := w.String(); got != `steps[7]: irreversible steps "submit", "confirm" with no effect contract` {
		t.Errorf("String() = %q", got)
	}
}
