package targeting

import (
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func affix(pre, suf string, m domain.MatchMode) *domain.NameMatch {
	return &domain.NameMatch{StartsWith: pre, EndsWith: suf, Match: m}
}

// TestResolveStartsWithEndsWith resolves names given as a starts_with /
// ends_with pair. The two may overlap: "ABA" starts with "AB" and ends with
// "BA", which the regular expression a capability could build from the
// same inputs (^AB.*BA$) refuses, as the last rows show.
func TestResolveStartsWithEndsWith(t *testing.T) {
	t.Parallel()
	s := build(t, n("document", "Payees",
		n("button", "ABA"),
		n("button", "Pay Ann Lee"),
		n("button", "Pay Bo to Bo Chan"),
		n("button", "Payroll: Ann"),
		n("link", "Statements for March"),
		n("link", "Statement for April"),
	))
	tests := []struct {
		name string
		d    domain.TargetDescriptor
		w    want
	}{
		{"overlapping start and end", domain.TargetDescriptor{Role: "button", Name: affix("AB", "BA", "")},
			want{role: "button", name: "ABA", strategy: domain.StrategySemanticExact, cands: 1}},
		{"overlap of words", domain.TargetDescriptor{Role: "button", Name: affix("Pay Ann", "Ann Lee", domain.MatchExact)},
			want{role: "button", name: "Pay Ann Lee", strategy: domain.StrategySemanticExact, cands: 1}},
		{"apart", domain.TargetDescriptor{Role: "button", Name: affix("Pay Bo", "Bo Chan", domain.MatchExact)},
			want{role: "button", name: "Pay Bo to Bo Chan", strategy: domain.StrategySemanticExact}},
		{"start alone", domain.TargetDescriptor{Role: "link", Name: affix("Statements", "", domain.MatchExact)},
			want{role: "link", name: "Statements for March", strategy: domain.StrategySemanticExact}},
		{"end alone", domain.TargetDescriptor{Role: "link", Name: affix("", "April", domain.MatchExact)},
			want{role: "link", name: "Statement for April", strategy: domain.StrategySemanticExact}},
		{"start alone can be ambiguous", domain.TargetDescriptor{Role: "link", Name: affix("Statement", "", domain.MatchExact)},
			want{code: domain.CodeTargetAmbiguous, msg: []string{`link starting "Statement"`, "2 candidates"}}},
		{"exact is case sensitive, normalized rung folds", domain.TargetDescriptor{Role: "button", Name: affix("pay ann", "LEE", domain.MatchExact)},
			want{role: "button", name: "Pay Ann Lee", strategy: domain.StrategySemanticNormalized}},
		{"normalized folds punctuation", domain.TargetDescriptor{Role: "button", Name: affix("PAYROLL", "ann!", domain.MatchNormalized)},
			want{role: "button", name: "Payroll: Ann", strategy: domain.StrategySemanticExact}},
		{"the end must be at the end", domain.TargetDescriptor{Role: "button", Name: affix("Pay", "Ann", domain.MatchExact)},
			want{role: "button", name: "Payroll: Ann", strategy: domain.StrategySemanticExact}},
		{"too short for both", domain.TargetDescriptor{Role: "button", Name: affix("ABA", "BAB", domain.MatchExact)},
			want{code: domain.CodeTargetNotFound, msg: []string{`button starting "ABA" ending "BAB"`}}},
		{"contains is refused", domain.TargetDescriptor{Role: "button", Name: affix("AB", "BA", domain.MatchContains)},
			want{code: domain.CodeCapabilityInvalid, msg: []string{"exact or normalized, not contains"}}},
		{"regex is refused", domain.TargetDescriptor{Role: "button", Name: affix("AB", "BA", domain.MatchRegex)},
			want{code: domain.CodeCapabilityInvalid, msg: []string{"not regex"}}},
		{"with a value is refused", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "ABA", StartsWith: "AB", Match: domain.MatchExact}},
			want{code: domain.CodeCapabilityInvalid, msg: []string{"not both"}}},
		{"unbound placeholder is refused", domain.TargetDescriptor{Role: "button", Name: affix("{input.a}", "BA", domain.MatchExact)},
			want{code: domain.CodeCapabilityInvalid, msg: []string{"unbound"}}},
		{"nothing to fold is refused", domain.TargetDescriptor{Role: "button", Name: affix(":", "!", domain.MatchNormalized)},
			want{code: domain.CodeCapabilityInvalid, msg: []string{"no letters or digits"}}},
		// The regular expression a capability builds from the same two
		// inputs (quoted) cannot match the overlapping names.
		{"regex of the pair misses the overlap", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "^AB.*BA$", Match: domain.MatchRegex}},
			want{code: domain.CodeTargetNotFound}},
		{"regex of the words misses the overlap", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "^Pay Ann.*Ann Lee$", Match: domain.MatchRegex}},
			want{code: domain.CodeTargetNotFound}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkResolve(t, s, tt.d, tt.w)
		})
	}
}

// TestEvalStartsWithEndsWith checks the pair in predicates: node_exists
// and node_absent judge it as targeting resolves it.
func TestEvalStartsWithEndsWith(t *testing.T) {
	t.Parallel()
	s := build(t, n("document", "Payees", n("heading", "Member 12345 - 12345")))
	for _, tt := range []struct {
		d            domain.TargetDescriptor
		exists, want bool
	}{
		{domain.TargetDescriptor{Role: "heading", Name: affix("Member 12345", "12345 - 12345", "")}, true, true},
		{domain.TargetDescriptor{Role: "heading", Name: affix("Member 12345", "23456", "")}, true, false},
		{domain.TargetDescriptor{Role: "heading", Name: affix("Member 2", "", "")}, false, true},
	} {
		p := domain.Predicate{NodeExists: &tt.d}
		if !tt.exists {
			p = domain.Predicate{NodeAbsent: &tt.d}
		}
		got, err := Eval(s, &p)
		if err != nil || got != tt.want {
			t.Errorf("Eval(exists=%v %s) = %v, %v; want %v", tt.exists, Describe(tt.d), got, err, tt.want)
		}
	}
}
