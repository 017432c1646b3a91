package domain_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func TestRunStatusExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status domain.RunStatus
		want   int
	}{
		{"success", domain.StatusSuccess, 0},
		{"business outcome is not a failure", domain.StatusBusinessOutcome, 0},
		{"needs human", domain.StatusNeedsHuman, 2},
		{"failed", domain.StatusFailed, 1},
		{"running is not a success", domain.StatusRunning, 1},
		{"empty", "", 1},
		{"unknown", "PARTIAL", 1},
		{"lower case is unknown", "success", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.status.ExitCode(); got != tt.want {
				t.Errorf("%q.ExitCode() = %d, want %d", tt.status, got, tt.want)
			}
		})
	}
}

func TestRiskRank(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		risk domain.Risk
		want int
	}{
		{"safe", domain.RiskSafe, 0},
		{"empty is safe", "", 0},
		{"elevated", domain.RiskElevated, 1},
		{"irreversible", domain.RiskIrreversible, 2},
		{"unknown ranks highest", "catastrophic", 3},
		{"upper case is unknown", "SAFE", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.risk.Rank(); got != tt.want {
				t.Errorf("%q.Rank() = %d, want %d", tt.risk, got, tt.want)
			}
		})
	}
}

func TestMaxRisk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []domain.Risk
		want domain.Risk
	}{
		{"none is safe", nil, domain.RiskSafe},
		{"empty is safe", []domain.Risk{""}, domain.RiskSafe},
		{"one", []domain.Risk{domain.RiskElevated}, domain.RiskElevated},
		{"order does not matter", []domain.Risk{domain.RiskIrreversible, domain.RiskSafe, domain.RiskElevated}, domain.RiskIrreversible},
		{"elevated over safe", []domain.Risk{domain.RiskSafe, domain.RiskElevated, ""}, domain.RiskElevated},
		{"unknown wins over irreversible", []domain.Risk{domain.RiskIrreversible, "bogus"}, "bogus"},
		{"first unknown wins a tie", []domain.Risk{"x", "y"}, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.MaxRisk(tt.in...); got != tt.want {
				t.Errorf("MaxRisk(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBackoffDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    domain.Backoff
		n    int
		want int
	}{
		{"first attempt waits initial", domain.Backoff{InitialMS: 200, Factor: 2, MaxMS: 5000}, 1, 200},
		{"second doubles", domain.Backoff{InitialMS: 200, Factor: 2, MaxMS: 5000}, 2, 400},
		{"fourth", domain.Backoff{InitialMS: 200, Factor: 2, MaxMS: 5000}, 4, 1600},
		{"capped", domain.Backoff{InitialMS: 200, Factor: 2, MaxMS: 5000}, 6, 5000},
		{"exactly the cap", domain.Backoff{InitialMS: 1250, Factor: 2, MaxMS: 5000}, 3, 5000},
		{"far past the cap does not overflow", domain.Backoff{InitialMS: 200, Factor: 2, MaxMS: 5000}, 5000, 5000},
		{"initial above the cap is capped", domain.Backoff{InitialMS: 9000, Factor: 2, MaxMS: 5000}, 1, 5000},
		{"no cap", domain.Backoff{InitialMS: 100, Factor: 3}, 4, 2700},
		{"factor one is constant", domain.Backoff{InitialMS: 300, Factor: 1, MaxMS: 1000}, 9, 300},
		{"fractional factor", domain.Backoff{InitialMS: 100, Factor: 1.5, MaxMS: 1000}, 3, 225},
		{"attempt zero waits initial", domain.Backoff{InitialMS: 100, Factor: 2, MaxMS: 1000}, 0, 100},
		{"zero value", domain.Backoff{}, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.b.Delay(tt.n); got != tt.want {
				t.Errorf("%+v.Delay(%d) = %d, want %d", tt.b, tt.n, got, tt.want)
			}
		})
	}
}

func TestBackoffDelayIsMonotonic(t *testing.T) {
	t.Parallel()
	b := domain.Backoff{InitialMS: 50, Factor: 1.7, MaxMS: 3000}
	prev := 0
	for n := 1; n <= 200; n++ {
		d := b.Delay(n)
		if d < prev || d > b.MaxMS {
			t.Fatalf("Delay(%d) = %d after %d (cap %d)", n, d, prev, b.MaxMS)
		}
		prev = d
	}
}

func TestEscalationEscalates(t *testing.T) {
	t.Parallel()
	e := domain.Escalation{Triggers: []domain.FailureCode{domain.CodeTargetNotFound, domain.CodeUnexpectedState}}
	tests := []struct {
		name string
		esc  domain.Escalation
		code domain.FailureCode
		want bool
	}{
		{"listed", e, domain.CodeTargetNotFound, true},
		{"second listed", e, domain.CodeUnexpectedState, true},
		{"not listed", e, domain.CodeTargetAmbiguous, false},
		{"empty code", e, "", false},
		{"no triggers", domain.Escalation{}, domain.CodeTargetNotFound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.esc.Escalates(tt.code); got != tt.want {
				t.Errorf("Escalates(%q) = %v, want %v", tt.code, got, tt.want)
			}
		})
	}
}

func strp(s string) *string { return &s }

func TestValueExprKindAndString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		v        *domain.ValueExpr
		kind     string
		str      string
		isSecret bool
	}{
		{"nil", nil, "", "<invalid value>", false},
		{"zero", &domain.ValueExpr{}, "", "<invalid value>", false},
		{"input", &domain.ValueExpr{Input: "member_id"}, "input", "{$input: member_id}", false},
		{"secret", &domain.ValueExpr{Secret: "bank_password"}, "secret", "{$secret: bank_password}", true},
		{"output", &domain.ValueExpr{Output: "balance"}, "output", "{$output: balance}", false},
		{"literal", domain.Lit("Enter"), "literal", "Enter", false},
		{"empty literal is set", &domain.ValueExpr{Literal: strp("")}, "literal", "", false},
		{"input and secret", &domain.ValueExpr{Input: "a", Secret: "b"}, "", "<invalid value>", true},
		{"output and literal", &domain.ValueExpr{Output: "a", Literal: strp("b")}, "", "<invalid value>", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.v.Kind(); got != tt.kind {
				t.Errorf("Kind() = %q, want %q", got, tt.kind)
			}
			if got := tt.v.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if got := tt.v.IsSecret(); got != tt.isSecret {
				t.Errorf("IsSecret() = %v, want %v", got, tt.isSecret)
			}
		})
	}
}

func TestValueExprFormatsSecretAsReference(t *testing.T) {
	t.Parallel()
	// A secret reference prints as its reference only: there is no value
	// in a ValueExpr to reveal, and String must not invent one.
	v := &domain.ValueExpr{Secret: "pw"}
	if got := fmt.Sprint(v); got != "{$secret: pw}" {
		t.Errorf("fmt.Sprint = %q", got)
	}
}

func TestValueExprUnmarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    domain.ValueExpr
		wantErr bool
	}{
		{"plain string is a literal", `"Enter"`, domain.ValueExpr{Literal: strp("Enter")}, false},
		{"empty string is an empty literal", `""`, domain.ValueExpr{Literal: strp("")}, false},
		{"input", `{"$input":"member_id"}`, domain.ValueExpr{Input: "member_id"}, false},
		{"secret", `{"$secret":"pw"}`, domain.ValueExpr{Secret: "pw"}, false},
		{"output", `{"$output":"balance"}`, domain.ValueExpr{Output: "balance"}, false},
		{"literal object", `{"literal":"x"}`, domain.ValueExpr{Literal: strp("x")}, false},
		{"two kinds", `{"$input":"a","$secret":"b"}`, domain.ValueExpr{}, true},
		{"literal and output", `{"literal":"a","$output":"b"}`, domain.ValueExpr{}, true},
		{"empty object", `{}`, domain.ValueExpr{}, true},
		{"number", `42`, domain.ValueExpr{}, true},
		{"array", `["a"]`, domain.ValueExpr{}, true},
		{"wrong field type", `{"$input":1}`, domain.ValueExpr{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got domain.ValueExpr
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Unmarshal(%s) = %+v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.in, err)
			}
			if got.Kind() != tt.want.Kind() || got.String() != tt.want.String() ||
				got.Input != tt.want.Input || got.Secret != tt.want.Secret || got.Output != tt.want.Output {
				t.Errorf("Unmarshal(%s) = %+v (%s), want %+v (%s)", tt.in, got, got.String(), tt.want, tt.want.String())
			}
		})
	}
}

func TestValueExprInStep(t *testing.T) {
	t.Parallel()
	var s domain.Step
	if err := json.Unmarshal([]byte(`{"id":"a","action":"press_key","value":"Enter"}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.Value.Kind() != "literal" || s.Value.String() != "Enter" {
		t.Errorf("step value = %v", s.Value)
	}
	b, err := json.Marshal(domain.Step{ID: "b", Action: domain.ActType, Value: &domain.ValueExpr{Secret: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	var back domain.Step
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("round trip of %s: %v", b, err)
	}
	if !back.Value.IsSecret() || back.Value.Secret != "pw" {
		t.Errorf("round trip value = %+v", back.Value)
	}
}

func TestNameMatchUnmarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    domain.NameMatch
		wantErr bool
	}{
		{"string is exact", `"Search"`, domain.NameMatch{Value: "Search", Match: domain.MatchExact}, false},
		{"object", `{"value":"Sea","match":"contains"}`, domain.NameMatch{Value: "Sea", Match: domain.MatchContains}, false},
		{"object without match", `{"value":"Go"}`, domain.NameMatch{Value: "Go"}, false},
		{"regex", `{"value":"^Acc.*$","match":"regex"}`, domain.NameMatch{Value: "^Acc.*$", Match: domain.MatchRegex}, false},
		{"number", `7`, domain.NameMatch{}, true},
		{"bad field type", `{"value":7}`, domain.NameMatch{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got domain.NameMatch
			err := json.Unmarshal([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%s) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("Unmarshal(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestTextQueryUnmarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    domain.TextQuery
		wantErr bool
	}{
		{"string", `"Member not found"`, domain.TextQuery{Text: "Member not found"}, false},
		{"object", `{"text":"x","match":"normalized","frame":"content"}`, domain.TextQuery{Text: "x", Match: domain.MatchNormalized, Frame: "content"}, false},
		{"bool", `true`, domain.TextQuery{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got domain.TextQuery
			err := json.Unmarshal([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%s) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("Unmarshal(%s) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestPredicateUnmarshalStringForms(t *testing.T) {
	t.Parallel()
	var p domain.Predicate
	in := `{"all_of":[{"text_present":"Welcome"},{"node_exists":{"role":"button","name":"Go"}}]}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind() != "all_of" || len(p.AllOf) != 2 {
		t.Fatalf("predicate = %+v", p)
	}
	if got := p.AllOf[0].TextPresent; got == nil || got.Text != "Welcome" {
		t.Errorf("text_present = %+v", got)
	}
	if got := p.AllOf[1].NodeExists; got == nil || got.Name == nil || *got.Name != (domain.NameMatch{Value: "Go", Match: domain.MatchExact}) {
		t.Errorf("node_exists = %+v", got)
	}
}

func TestPredicateKind(t *testing.T) {
	t.Parallel()
	td := &domain.TargetDescriptor{Role: "button"}
	tq := &domain.TextQuery{Text: "x"}
	tests := []struct {
		name string
		p    *domain.Predicate
		want string
	}{
		{"nil", nil, ""},
		{"none set", &domain.Predicate{}, ""},
		{"node_exists", &domain.Predicate{NodeExists: td}, "node_exists"},
		{"node_absent", &domain.Predicate{NodeAbsent: td}, "node_absent"},
		{"node_has_value", &domain.Predicate{NodeHasValue: &domain.ValueCheck{}}, "node_has_value"},
		{"text_present", &domain.Predicate{TextPresent: tq}, "text_present"},
		{"text_absent", &domain.Predicate{TextAbsent: tq}, "text_absent"},
		{"url_matches", &domain.Predicate{URLMatches: "/done"}, "url_matches"},
		{"http_status_in", &domain.Predicate{HTTPStatusIn: []int{502}}, "http_status_in"},
		{"empty http_status_in is set", &domain.Predicate{HTTPStatusIn: []int{}}, "http_status_in"},
		{"all_of", &domain.Predicate{AllOf: []domain.Predicate{}}, "all_of"},
		{"any_of", &domain.Predicate{AnyOf: []domain.Predicate{{URLMatches: "x"}}}, "any_of"},
		{"not", &domain.Predicate{Not: &domain.Predicate{}}, "not"},
		{"two set", &domain.Predicate{NodeExists: td, TextPresent: tq}, ""},
		{"url and not", &domain.Predicate{URLMatches: "x", Not: &domain.Predicate{}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.p.Kind(); got != tt.want {
				t.Errorf("Kind() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPredicateWalk(t *testing.T) {
	t.Parallel()
	leaf := func(u string) domain.Predicate { return domain.Predicate{URLMatches: u} }
	tests := []struct {
		name string
		p    *domain.Predicate
		want []string // URLMatches of visited predicates, "" for combinators
	}{
		{"nil visits nothing", nil, nil},
		{"leaf", &domain.Predicate{URLMatches: "a"}, []string{"a"}},
		{
			"nested depth first",
			&domain.Predicate{AllOf: []domain.Predicate{
				leaf("a"),
				{AnyOf: []domain.Predicate{leaf("b"), {Not: &domain.Predicate{URLMatches: "c"}}}},
				leaf("d"),
			}},
			[]string{"", "a", "", "b", "", "c", "d"},
		},
		{"not of not", &domain.Predicate{Not: &domain.Predicate{Not: &domain.Predicate{URLMatches: "x"}}}, []string{"", "", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			tt.p.Walk(func(p *domain.Predicate) { got = append(got, p.URLMatches) })
			if !slices.Equal(got, tt.want) {
				t.Errorf("visited %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPredicateWalkCanEdit(t *testing.T) {
	t.Parallel()
	p := &domain.Predicate{AnyOf: []domain.Predicate{{URLMatches: "a"}, {Not: &domain.Predicate{URLMatches: "b"}}}}
	p.Walk(func(q *domain.Predicate) {
		if q.URLMatches != "" {
			q.URLMatches += "!"
		}
	})
	if p.AnyOf[0].URLMatches != "a!" || p.AnyOf[1].Not.URLMatches != "b!" {
		t.Errorf("Walk handed out copies, not the nested predicates: %+v", p)
	}
}

func TestErrorCode(t *testing.T) {
	t.Parallel()
	base := domain.Errorf(domain.CodeLeaseLost, "gone")
	tests := []struct {
		name string
		err  error
		want domain.FailureCode
	}{
		{"nil", nil, ""},
		{"foreign error is internal", errors.New("boom"), domain.CodeInternal},
		{"io.EOF is internal", io.EOF, domain.CodeInternal},
		{"domain error", base, domain.CodeLeaseLost},
		{"wrapped once", fmt.Errorf("act: %w", base), domain.CodeLeaseLost},
		{"wrapped twice", fmt.Errorf("run: %w", fmt.Errorf("act: %w", base)), domain.CodeLeaseLost},
		{"outermost domain error wins", domain.Wrap(domain.CodeTimeout, base, "wait"), domain.CodeTimeout},
		{"joined", errors.Join(errors.New("x"), base), domain.CodeLeaseLost},
		{"domain error wrapping a foreign error", domain.Wrap(domain.CodeSurfaceError, io.EOF, "read"), domain.CodeSurfaceError},
		{"empty code", &domain.Error{Message: "x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.ErrorCode(tt.err); got != tt.want {
				t.Errorf("ErrorCode(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestErrorError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *domain.Error
		want string
	}{
		{"message only", &domain.Error{Code: domain.CodeTargetNotFound, Message: "no button"}, "TARGET_NOT_FOUND: no button"},
		{"wrapped error only", &domain.Error{Code: domain.CodeSurfaceError, Err: io.EOF}, "SURFACE_ERROR: EOF"},
		{"message and wrapped error", &domain.Error{Code: domain.CodeSurfaceError, Message: "observe", Err: io.EOF}, "SURFACE_ERROR: observe: EOF"},
		{"neither", &domain.Error{Code: domain.CodeInternal}, "INTERNAL: "},
		{"Errorf formats", domain.Errorf(domain.CodeInputInvalid, "input %q is %d long", "x", 3), `INPUT_INVALID: input "x" is 3 long`},
		{"Wrap", domain.Wrap(domain.CodeTimeout, errors.New("deadline"), "wait"), "TIMEOUT: wait: deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorUnwrap(t *testing.T) {
	t.Parallel()
	err := domain.Wrap(domain.CodeSurfaceError, io.EOF, "read")
	if !errors.Is(err, io.EOF) {
		t.Error("errors.Is(Wrap(..., io.EOF), io.EOF) = false")
	}
	if domain.Errorf(domain.CodeInternal, "x").Unwrap() != nil {
		t.Error("Errorf(...).Unwrap() != nil")
	}
}

func TestRect(t *testing.T) {
	t.Parallel()
	r := domain.Rect{X: 10, Y: 20, W: 100, H: 50}
	tests := []struct {
		name   string
		r      domain.Rect
		x, y   float64
		inside bool
	}{
		{"centre", r, 60, 45, true},
		{"top-left corner is inside", r, 10, 20, true},
		{"right edge is outside", r, 110, 30, false},
		{"bottom edge is outside", r, 50, 70, false},
		{"just inside bottom-right", r, 109.999, 69.999, true},
		{"left of box", r, 9.999, 30, false},
		{"above box", r, 50, 19, false},
		{"empty box contains nothing", domain.Rect{X: 5, Y: 5}, 5, 5, false},
		{"negative origin", domain.Rect{X: -10, Y: -10, W: 5, H: 5}, -7, -7, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.r.Contains(tt.x, tt.y); got != tt.inside {
				t.Errorf("%+v.Contains(%v, %v) = %v, want %v", tt.r, tt.x, tt.y, got, tt.inside)
			}
		})
	}
}

func TestRectCenterAndEmpty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		r      domain.Rect
		cx, cy float64
		empty  bool
	}{
		{"box", domain.Rect{X: 10, Y: 20, W: 100, H: 50}, 60, 45, false},
		{"zero", domain.Rect{}, 0, 0, true},
		{"zero width", domain.Rect{X: 1, Y: 1, W: 0, H: 10}, 1, 6, true},
		{"zero height", domain.Rect{X: 1, Y: 1, W: 10, H: 0}, 6, 1, true},
		{"negative width", domain.Rect{W: -4, H: 4}, -2, 2, true},
		{"odd size", domain.Rect{X: 0, Y: 0, W: 3, H: 5}, 1.5, 2.5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cx, cy := tt.r.Center()
			if cx != tt.cx || cy != tt.cy {
				t.Errorf("Center() = (%v, %v), want (%v, %v)", cx, cy, tt.cx, tt.cy)
			}
			if got := tt.r.Empty(); got != tt.empty {
				t.Errorf("Empty() = %v, want %v", got, tt.empty)
			}
			if !tt.empty && !tt.r.Contains(cx, cy) {
				t.Errorf("a non-empty box does not contain its centre")
			}
		})
	}
}

func TestUiSnapshotFrame(t *testing.T) {
	t.Parallel()
	s := &domain.UiSnapshot{Frames: []domain.Frame{
		{ID: "top", Path: "", URL: "http://a/"},
		{ID: "c", Name: "content", Path: "content"},
		{ID: "i", Name: "inner", Path: "content/inner"},
	}}
	tests := []struct {
		name   string
		path   string
		wantID string
	}{
		{"top document", "", "top"},
		{"named frame", "content", "c"},
		{"nested frame by path", "content/inner", "i"},
		{"name alone is not a path", "inner", ""},
		{"missing", "nope", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := s.Frame(tt.path)
			if tt.wantID == "" {
				if f != nil {
					t.Errorf("Frame(%q) = %+v, want nil", tt.path, f)
				}
				return
			}
			if f == nil || f.ID != tt.wantID {
				t.Fatalf("Frame(%q) = %+v, want id %q", tt.path, f, tt.wantID)
			}
			if f != &s.Frames[slices.IndexFunc(s.Frames, func(x domain.Frame) bool { return x.ID == tt.wantID })] {
				t.Error("Frame returned a copy, not the snapshot's frame")
			}
		})
	}
	if (&domain.UiSnapshot{}).Frame("") != nil {
		t.Error("Frame on a snapshot without frames is not nil")
	}
}

func TestUiSnapshotStatusIn(t *testing.T) {
	t.Parallel()
	withFrames := &domain.UiSnapshot{HTTPStatus: 200, Frames: []domain.Frame{{Path: ""}, {Path: "content", HTTPStatus: 502}}}
	tests := []struct {
		name  string
		s     *domain.UiSnapshot
		codes []int
		want  bool
	}{
		{"top status", &domain.UiSnapshot{HTTPStatus: 404}, []int{404}, true},
		{"top status not listed", &domain.UiSnapshot{HTTPStatus: 404}, []int{500, 502}, false},
		{"a frame's status", withFrames, []int{502, 503}, true},
		{"top of a framed snapshot", withFrames, []int{200}, true},
		{"nobody answered it", withFrames, []int{503}, false},
		{"no codes", withFrames, nil, false},
		{"unknown status is zero", &domain.UiSnapshot{}, []int{0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.s.StatusIn(tt.codes); got != tt.want {
				t.Errorf("StatusIn(%v) = %v, want %v", tt.codes, got, tt.want)
			}
		})
	}
}

func TestActionTypeMutatesAndNeedsTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ                  domain.ActionType
		mutates, needsTarget bool
	}{
		{domain.ActClick, true, true},
		{domain.ActType, true, true},
		{domain.ActSelect, true, true},
		{domain.ActPressKey, true, false},
		{domain.ActRawInput, true, false},
		{domain.ActNavigate, false, false},
		{domain.ActExtract, false, true},
		{domain.ActWaitFor, false, false},
		{domain.ActAssert, false, false},
		{domain.ActReload, false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ), func(t *testing.T) {
			t.Parallel()
			if got := tt.typ.Mutates(); got != tt.mutates {
				t.Errorf("Mutates() = %v, want %v", got, tt.mutates)
			}
			if got := tt.typ.NeedsTarget(); got != tt.needsTarget {
				t.Errorf("NeedsTarget() = %v, want %v", got, tt.needsTarget)
			}
		})
	}
}

func TestStrategyStrength(t *testing.T) {
	t.Parallel()
	order := []domain.Strategy{
		domain.StrategySemanticExact, domain.StrategySemanticNormalized, domain.StrategyStructuralAnchor,
		domain.StrategyHintCached, domain.StrategyOrdinalInRegion, "unknown",
	}
	for i, s := range order {
		if got := s.Strength(); got != i {
			t.Errorf("%q.Strength() = %d, want %d", s, got, i)
		}
	}
}

func TestCapabilityLookups(t *testing.T) {
	t.Parallel()
	c := &domain.Capability{
		ID: "member.lookup", Version: "1.2.0",
		Steps:   []domain.Step{{ID: "a"}, {ID: "b"}},
		Inputs:  []domain.InputSpec{{Name: "member_id"}},
		Outputs: []domain.OutputSpec{{Name: "balance"}},
	}
	if got := c.Ref(); got != "member.lookup@1.2.0" {
		t.Errorf("Ref() = %q", got)
	}
	if c.Sealed() {
		t.Error("a capability without a hash is sealed")
	}
	if s := c.Step("b"); s == nil || s != &c.Steps[1] {
		t.Errorf("Step(b) = %p, want %p", s, &c.Steps[1])
	}
	if c.Step("z") != nil || c.Input("z") != nil || c.Output("z") != nil {
		t.Error("lookup of a missing name is not nil")
	}
	if in := c.Input("member_id"); in == nil || in != &c.Inputs[0] {
		t.Error("Input(member_id) is not the capability's spec")
	}
	if out := c.Output("balance"); out == nil || out != &c.Outputs[0] {
		t.Error("Output(balance) is not the capability's spec")
	}
	c.ContentHash = "sha256:x"
	if !c.Sealed() {
		t.Error("a capability with a hash is not sealed")
	}
}
