package targeting

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func TestEval(t *testing.T) {
	t.Parallel()
	s := desk(t)
	s.URL = "https://bank.example/members/42"
	s.Frames[1].URL = "https://bank.example/content/details?id=7"
	s.Frames[1].HTTPStatus = 502
	s.Dialog = &domain.Dialog{Type: "confirm", Message: "Close the account?"}
	button := func(name string) *domain.TargetDescriptor {
		return &domain.TargetDescriptor{Role: "button", Name: exact(name)}
	}
	tq := func(text string, m domain.MatchMode) *domain.TextQuery {
		return &domain.TextQuery{Text: text, Match: m}
	}
	yes := domain.Predicate{URLMatches: "members"}
	no := domain.Predicate{URLMatches: "^nope$"}
	tests := []struct {
		name string
		p    domain.Predicate
		want bool
	}{
		{"node_exists", domain.Predicate{NodeExists: button("Clear")}, true},
		{"node_exists on a weaker rung", domain.Predicate{NodeExists: button("clear")}, true},
		{"node_exists: ambiguity exists", domain.Predicate{NodeExists: button("Edit")}, true},
		{"node_exists: missing", domain.Predicate{NodeExists: button("Transfer")}, false},
		{"node_exists: hidden", domain.Predicate{NodeExists: button("Archive")}, false},
		{"node_exists: ordinal out of range", domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "button", Name: exact("Edit"), Ordinal: ptr(3)}}, false},
		{"node_exists: role alone", domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "searchbox"}}, true},
		{"node_absent", domain.Predicate{NodeAbsent: button("Transfer")}, true},
		{"node_absent: present", domain.Predicate{NodeAbsent: button("Edit")}, false},
		{"node_has_value exact", domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "textbox", Name: exact("Member ID")}, Value: " 12345 "}}, true},
		{"node_has_value wrong", domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "textbox", Name: exact("Member ID")}, Value: "1234"}}, false},
		{"node_has_value contains", domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "textbox", Name: exact("Member ID")}, Value: "234", Match: domain.MatchContains}}, true},
		{"node_has_value regex", domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "textbox", Name: exact("Member ID")}, Value: `^\d{5}$`, Match: domain.MatchRegex}}, true},
		{"node_has_value text of a cell, normalized", domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "cell", Anchor: anchor(domain.RelRowOf, "Savings"), Ordinal: ptr(1)}, Value: "1234.56", Match: domain.MatchNormalized}}, true},
		{"node_has_value empty input", domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "searchbox"}, Value: ""}}, true},
		{"node_has_value ambiguous", domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: *button("Edit"), Value: "Edit"}}, false},
		{"node_has_value missing", domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: *button("Transfer"), Value: ""}}, false},
		{"text_present contains", domain.Predicate{TextPresent: tq("Member search", "")}, true},
		{"text_present across nodes", domain.Predicate{TextPresent: tq("Savings $1,234.56 Edit", domain.MatchContains)}, true},
		{"text_present is case sensitive", domain.Predicate{TextPresent: tq("member search", "")}, false},
		{"text_present normalized", domain.Predicate{TextPresent: tq("MEMBER search!", domain.MatchNormalized)}, true},
		{"text_present exact unit", domain.Predicate{TextPresent: tq("$99.00", domain.MatchExact)}, true},
		{"text_present exact is not a substring", domain.Predicate{TextPresent: tq("99.00", domain.MatchExact)}, false},
		{"text_present regex", domain.Predicate{TextPresent: tq(`\$[0-9,]+\.\d\d`, domain.MatchRegex)}, true},
		{"text_present input value", domain.Predicate{TextPresent: tq("12345", "")}, true},
		{"text_present hidden text", domain.Predicate{TextPresent: tq("Archive", "")}, false},
		{"text_present dialog message", domain.Predicate{TextPresent: tq("Close the account?", "")}, true},
		{"text_present in a frame", domain.Predicate{TextPresent: &domain.TextQuery{Text: "Details", Frame: "content"}}, true},
		{"text_present not in that frame", domain.Predicate{TextPresent: &domain.TextQuery{Text: "Member search", Frame: "content"}}, false},
		{"text_present by last frame element", domain.Predicate{TextPresent: &domain.TextQuery{Text: "Help", Frame: "inner"}}, true},
		{"text_absent", domain.Predicate{TextAbsent: tq("Account closed", "")}, true},
		{"text_absent present", domain.Predicate{TextAbsent: tq("Savings", "")}, false},
		{"url_matches", domain.Predicate{URLMatches: `/members/\d+$`}, true},
		{"url_matches a frame", domain.Predicate{URLMatches: `details\?id=7`}, true},
		{"url_matches no", domain.Predicate{URLMatches: `/loans/`}, false},
		{"http_status_in a frame", domain.Predicate{HTTPStatusIn: []int{502, 503}}, true},
		{"http_status_in top", domain.Predicate{HTTPStatusIn: []int{200}}, true},
		{"http_status_in no", domain.Predicate{HTTPStatusIn: []int{404}}, false},
		{"http_status_in empty", domain.Predicate{HTTPStatusIn: []int{}}, false},
		{"all_of", domain.Predicate{AllOf: []domain.Predicate{yes, {NodeExists: button("Clear")}}}, true},
		{"all_of one false", domain.Predicate{AllOf: []domain.Predicate{yes, no}}, false},
		{"all_of empty", domain.Predicate{AllOf: []domain.Predicate{}}, true},
		{"any_of", domain.Predicate{AnyOf: []domain.Predicate{no, yes}}, true},
		{"any_of none", domain.Predicate{AnyOf: []domain.Predicate{no, no}}, false},
		{"any_of empty", domain.Predicate{AnyOf: []domain.Predicate{}}, false},
		{"not", domain.Predicate{Not: &no}, true},
		{"not not", domain.Predicate{Not: &domain.Predicate{Not: &no}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Eval(s, &tt.p)
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if got != tt.want {
				t.Errorf("Eval = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEvalJSDialogNodes(t *testing.T) {
	t.Parallel()
	s := build(t,
		n("document", "Page", n("button", "Close account", text("Close account"))),
		n("alertdialog", "Close the account?", n("button", "OK"), n("button", "Cancel")),
	)
	for _, p := range []domain.Predicate{
		{TextPresent: &domain.TextQuery{Text: "Close the account?"}},
		{TextPresent: &domain.TextQuery{Text: "OK", Match: domain.MatchExact}},
		{NodeExists: &domain.TargetDescriptor{Role: "alertdialog"}},
		{NodeExists: &domain.TargetDescriptor{Role: "button", Name: exact("OK"), Scope: &domain.Scope{Region: "Close the account?"}}},
	} {
		if ok, err := Eval(s, &p); err != nil || !ok {
			t.Errorf("Eval(%+v) = %v, %v", p, ok, err)
		}
	}
}

func TestEvalMalformed(t *testing.T) {
	t.Parallel()
	cyclic := &domain.Predicate{}
	cyclic.Not = cyclic
	deep := domain.Predicate{URLMatches: "x"}
	for i := 0; i < 40; i++ {
		deep = domain.Predicate{AllOf: []domain.Predicate{deep}}
	}
	good := domain.Predicate{URLMatches: "x"}
	tests := []struct {
		name string
		p    *domain.Predicate
	}{
		{"nil", nil},
		{"empty", &domain.Predicate{}},
		{"two conditions", &domain.Predicate{URLMatches: "x", HTTPStatusIn: []int{200}}},
		{"bad url regex", &domain.Predicate{URLMatches: "("}},
		{"bad text regex", &domain.Predicate{TextPresent: &domain.TextQuery{Text: "[", Match: domain.MatchRegex}}},
		{"bad text mode", &domain.Predicate{TextAbsent: &domain.TextQuery{Text: "x", Match: "fuzzy"}}},
		{"empty text", &domain.Predicate{TextPresent: &domain.TextQuery{Text: " "}}},
		{"bad name regex", &domain.Predicate{NodeExists: &domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "(", Match: domain.MatchRegex}}}},
		{"bad anchor", &domain.Predicate{NodeAbsent: &domain.TargetDescriptor{Role: "button", Anchor: &domain.Anchor{Relation: "near", Text: "x"}}}},
		{"bad value regex", &domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "textbox"}, Value: "(", Match: domain.MatchRegex}}},
		{"bad value mode", &domain.Predicate{NodeHasValue: &domain.ValueCheck{Target: domain.TargetDescriptor{Role: "textbox"}, Match: "near"}}},
		{"nested in all_of after a true one", &domain.Predicate{AllOf: []domain.Predicate{good, {}}}},
		{"nested in any_of after a true one", &domain.Predicate{AnyOf: []domain.Predicate{good, {URLMatches: "("}}}},
		{"nested in not", &domain.Predicate{Not: &domain.Predicate{}}},
		{"cyclic", cyclic},
		{"too deep", &deep},
	}
	for _, s := range []*domain.UiSnapshot{nil, desk(t)} {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ok, err := Eval(s, tt.p)
				if domain.ErrorCode(err) != domain.CodeCapabilityInvalid || ok {
					t.Errorf("Eval = %v, %v; want CAPABILITY_INVALID", ok, err)
				}
			})
		}
	}
}

// TestEvalCheckedState: node_checked, node_unchecked and node_selected
// read one node's state; a target not found or ambiguous holds neither
// way (an absent box is not "unchecked").
func TestEvalCheckedState(t *testing.T) {
	t.Parallel()
	s := build(t, n("document", "Preferences",
		n("checkbox", "Email statements").state(domain.NodeStates{Checked: true}),
		n("checkbox", "Text alerts"),
		n("radio", "Monthly"), n("radio", "Monthly"),
		n("tab", "Savings").state(domain.NodeStates{Selected: true}),
		n("tab", "Loans"),
	))
	d := func(role, name string) *domain.TargetDescriptor {
		return &domain.TargetDescriptor{Role: role, Name: exact(name)}
	}
	tests := []struct {
		name string
		p    domain.Predicate
		want bool
	}{
		{"checked", domain.Predicate{NodeChecked: d("checkbox", "Email statements")}, true},
		{"checked: not ticked", domain.Predicate{NodeChecked: d("checkbox", "Text alerts")}, false},
		{"unchecked", domain.Predicate{NodeUnchecked: d("checkbox", "Text alerts")}, true},
		{"unchecked: ticked", domain.Predicate{NodeUnchecked: d("checkbox", "Email statements")}, false},
		{"unchecked: absent is not unchecked", domain.Predicate{NodeUnchecked: d("checkbox", "Paper statements")}, false},
		{"unchecked: ambiguous is not unchecked", domain.Predicate{NodeUnchecked: d("radio", "Monthly")}, false},
		{"selected", domain.Predicate{NodeSelected: d("tab", "Savings")}, true},
		{"selected: another tab", domain.Predicate{NodeSelected: d("tab", "Loans")}, false},
		{"not checked", domain.Predicate{Not: &domain.Predicate{NodeChecked: d("checkbox", "Text alerts")}}, true},
	}
	for _, tt := range tests {
		got, err := Eval(s, &tt.p)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	bad := &domain.TargetDescriptor{Role: "checkbox", Name: &domain.NameMatch{Value: "(", Match: domain.MatchRegex}}
	if _, err := Eval(s, &domain.Predicate{NodeChecked: bad}); err == nil {
		t.Error("node_checked with a bad regular expression: want CAPABILITY_INVALID")
	}
}
