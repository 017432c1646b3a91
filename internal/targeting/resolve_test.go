package targeting

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// want describes an expected resolution: the node by role, name and
// occurrence, or an error code.
type want struct {
	role, name string
	k          int
	strategy   domain.Strategy
	cands      int
	drifted    bool
	code       domain.FailureCode
	msg        []string // substrings of the error message
}

func checkResolve(t *testing.T, s *domain.UiSnapshot, d domain.TargetDescriptor, w want) {
	t.Helper()
	res, err := Resolve(s, d)
	if w.code != "" {
		if domain.ErrorCode(err) != w.code {
			t.Fatalf("Resolve(%s) = %+v, %v; want %s", Describe(d), res, err, w.code)
		}
		if res.Node != -1 {
			t.Errorf("failed resolution names node %d", res.Node)
		}
		for _, m := range w.msg {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("error %q does not mention %q", err, m)
			}
		}
		if w.strategy != "" && res.Strategy != w.strategy {
			t.Errorf("strategy = %s, want %s", res.Strategy, w.strategy)
		}
		return
	}
	if err != nil {
		t.Fatalf("Resolve(%s): %v", Describe(d), err)
	}
	if wn := find(t, s, w.role, w.name, w.k); res.Node != wn {
		t.Fatalf("Resolve(%s) = node %d %s %q (%s), want %d", Describe(d), res.Node, s.Nodes[res.Node].Role, s.Nodes[res.Node].Name, s.Nodes[res.Node].Path, wn)
	}
	if res.Strategy != w.strategy {
		t.Errorf("strategy = %s, want %s", res.Strategy, w.strategy)
	}
	if w.cands != 0 && res.Candidates != w.cands {
		t.Errorf("candidates = %d, want %d", res.Candidates, w.cands)
	}
	if res.Drifted != w.drifted {
		t.Errorf("drifted = %v, want %v", res.Drifted, w.drifted)
	}
}

func TestResolveSemantic(t *testing.T) {
	t.Parallel()
	s := desk(t)
	tests := []struct {
		name string
		d    domain.TargetDescriptor
		w    want
	}{
		{"exact", domain.TargetDescriptor{Role: "button", Name: exact("Clear")},
			want{role: "button", name: "Clear", strategy: domain.StrategySemanticExact, cands: 1}},
		{"exact collapses whitespace", domain.TargetDescriptor{Role: "button", Name: exact("  Clear\u00a0")},
			want{role: "button", name: "Clear", strategy: domain.StrategySemanticExact}},
		{"default match is exact", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "Clear"}},
			want{role: "button", name: "Clear", strategy: domain.StrategySemanticExact}},
		{"exact is case sensitive, normalized rung folds", domain.TargetDescriptor{Role: "button", Name: exact("CLEAR!")},
			want{role: "button", name: "Clear", strategy: domain.StrategySemanticNormalized}},
		{"normalized mode", domain.TargetDescriptor{Role: "textbox", Name: &domain.NameMatch{Value: "member: ID", Match: domain.MatchNormalized}},
			want{role: "textbox", name: "Member ID", strategy: domain.StrategySemanticExact}},
		{"contains", domain.TargetDescriptor{Role: "searchbox", Name: &domain.NameMatch{Value: "QUICK", Match: domain.MatchContains}},
			want{role: "searchbox", name: "Quick find", strategy: domain.StrategySemanticExact}},
		{"regex", domain.TargetDescriptor{Role: "link", Name: &domain.NameMatch{Value: "^Mem", Match: domain.MatchRegex}},
			want{role: "link", name: "Members", strategy: domain.StrategySemanticExact}},
		{"regex has no normalized rung", domain.TargetDescriptor{Role: "link", Name: &domain.NameMatch{Value: "^mem", Match: domain.MatchRegex}},
			want{code: domain.CodeTargetNotFound, msg: []string{"tried semantic_exact)"}}},
		{"role must match", domain.TargetDescriptor{Role: "heading", Name: exact("Clear")},
			want{code: domain.CodeTargetNotFound, msg: []string{`heading "Clear"`, "semantic_exact, semantic_normalized"}}},
		{"textbox matches searchbox", domain.TargetDescriptor{Role: "textbox", Name: exact("Quick find")},
			want{role: "searchbox", name: "Quick find", strategy: domain.StrategySemanticExact}},
		{"searchbox does not match textbox", domain.TargetDescriptor{Role: "searchbox", Name: exact("Member ID")},
			want{code: domain.CodeTargetNotFound}},
		{"descriptor role is canonicalised", domain.TargetDescriptor{Role: "image", Name: exact("Logo")},
			want{role: "img", name: "Logo", strategy: domain.StrategySemanticExact}},
		{"empty role matches any role", domain.TargetDescriptor{Name: exact("Quick find")},
			want{role: "searchbox", name: "Quick find", strategy: domain.StrategySemanticExact}},
		{"disabled is a candidate", domain.TargetDescriptor{Role: "button", Name: exact("Delete")},
			want{role: "button", name: "Delete", strategy: domain.StrategySemanticExact}},
		{"hidden is not", domain.TargetDescriptor{Role: "button", Name: exact("Archive")},
			want{code: domain.CodeTargetNotFound}},
		{"ambiguous across frames", domain.TargetDescriptor{Role: "button", Name: exact("Search")},
			want{code: domain.CodeTargetAmbiguous, strategy: domain.StrategySemanticExact,
				msg: []string{`button "Search"`, "semantic_exact", "2 candidates", "/0.2.1.2", "content/0.1"}}},
		{"scope frame", domain.TargetDescriptor{Role: "button", Name: exact("Search"), Scope: &domain.Scope{Frame: "content"}},
			want{role: "button", name: "Search", k: 1, strategy: domain.StrategySemanticExact}},
		{"scope frame by last path element", domain.TargetDescriptor{Role: "button", Name: exact("Help"), Scope: &domain.Scope{Frame: "inner"}},
			want{role: "button", name: "Help", strategy: domain.StrategySemanticExact}},
		{"scope frame excludes", domain.TargetDescriptor{Role: "button", Name: exact("Help"), Scope: &domain.Scope{Frame: "content"}},
			want{code: domain.CodeTargetNotFound, msg: []string{`in frame "content"`}}},
		{"scope region", domain.TargetDescriptor{Role: "button", Name: exact("Search"), Scope: &domain.Scope{Region: "member LOOKUP"}},
			want{role: "button", name: "Search", strategy: domain.StrategySemanticExact}},
		{"scope region excludes", domain.TargetDescriptor{Role: "button", Name: exact("Clear"), Scope: &domain.Scope{Region: "Accounts"}},
			want{code: domain.CodeTargetNotFound}},
		{"ambiguous rows", domain.TargetDescriptor{Role: "button", Name: exact("Edit")},
			want{code: domain.CodeTargetAmbiguous, msg: []string{"2 candidates", "/0.2.3.1.2.0", "/0.2.3.2.2.0"}}},
		{"ordinal disambiguates", domain.TargetDescriptor{Role: "button", Name: exact("Edit"), Ordinal: ptr(2)},
			want{role: "button", name: "Edit", k: 1, strategy: domain.StrategySemanticExact, cands: 2}},
		{"ordinal 1 of 1", domain.TargetDescriptor{Role: "button", Name: exact("Clear"), Ordinal: ptr(1)},
			want{role: "button", name: "Clear", strategy: domain.StrategySemanticExact}},
		{"ordinal out of range", domain.TargetDescriptor{Role: "button", Name: exact("Edit"), Ordinal: ptr(3)},
			want{code: domain.CodeTargetNotFound, strategy: domain.StrategySemanticExact, msg: []string{"ordinal 3 out of range", "2 candidate(s) on semantic_exact"}}},
		{"drift", domain.TargetDescriptor{Role: "button", Name: exact("clear"), RecordedStrategy: domain.StrategySemanticExact},
			want{role: "button", name: "Clear", strategy: domain.StrategySemanticNormalized, drifted: true}},
		{"no drift when stronger", domain.TargetDescriptor{Role: "button", Name: exact("Clear"), RecordedStrategy: domain.StrategyHintCached},
			want{role: "button", name: "Clear", strategy: domain.StrategySemanticExact}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkResolve(t, s, tt.d, tt.w)
		})
	}
}

func TestResolveHintAndOrdinal(t *testing.T) {
	t.Parallel()
	s := desk(t)
	tests := []struct {
		name string
		d    domain.TargetDescriptor
		w    want
	}{
		{"hint alone", domain.TargetDescriptor{Role: "button", Hints: &domain.Hints{CSS: "#search-btn"}},
			want{role: "button", name: "Search", strategy: domain.StrategyHintCached}},
		{"hint with a folded name", domain.TargetDescriptor{Role: "button", Name: exact("Go"), Hints: &domain.Hints{CSS: "#search-btn"}},
			want{code: domain.CodeTargetNotFound, msg: []string{"semantic_exact, semantic_normalized, hint_cached"}}},
		{"hint with the wrong role", domain.TargetDescriptor{Role: "link", Name: exact("Find"), Hints: &domain.Hints{CSS: "#search-btn"}},
			want{code: domain.CodeTargetNotFound}},
		{"hint after semantic", domain.TargetDescriptor{Role: "textbox", Name: exact("member id"), Hints: &domain.Hints{CSS: "#search-btn"}},
			want{role: "textbox", name: "Member ID", strategy: domain.StrategySemanticNormalized}},
		{"hint drift", domain.TargetDescriptor{Role: "button", Name: exact("Go"), Hints: &domain.Hints{CSS: "#search-btn"}, RecordedStrategy: domain.StrategySemanticExact},
			want{code: domain.CodeTargetNotFound}},
		{"ordinal in region", domain.TargetDescriptor{Role: "link", Scope: &domain.Scope{Region: "Primary"}, Ordinal: ptr(2)},
			want{role: "link", name: "Search", strategy: domain.StrategyOrdinalInRegion, cands: 2}},
		{"ordinal in region out of range", domain.TargetDescriptor{Role: "link", Ordinal: ptr(3)},
			want{code: domain.CodeTargetNotFound, strategy: domain.StrategyOrdinalInRegion}},
		{"role alone, unique", domain.TargetDescriptor{Role: "searchbox"},
			want{role: "searchbox", name: "Quick find", strategy: domain.StrategyOrdinalInRegion}},
		{"role alone, ambiguous", domain.TargetDescriptor{Role: "link"},
			want{code: domain.CodeTargetAmbiguous, strategy: domain.StrategyOrdinalInRegion}},
		{"hint that misses falls through to ordinal", domain.TargetDescriptor{Role: "link", Ordinal: ptr(1), Hints: &domain.Hints{CSS: "#gone"}, RecordedStrategy: domain.StrategyHintCached},
			want{role: "link", name: "Members", strategy: domain.StrategyOrdinalInRegion, drifted: true}},
		{"ordinal is not a rung for named targets", domain.TargetDescriptor{Role: "link", Name: exact("Nope"), Ordinal: ptr(1)},
			want{code: domain.CodeTargetNotFound, msg: []string{"semantic_exact, semantic_normalized)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkResolve(t, s, tt.d, tt.w)
		})
	}
}

func TestResolveHiddenAfterNormalize(t *testing.T) {
	t.Parallel()
	s := desk(t)
	clear := find(t, s, "button", "Clear", 0)
	s.Nodes[clear].States.Hidden = true
	for _, d := range []domain.TargetDescriptor{
		{Role: "button", Name: exact("Clear")},
		{Role: "button", Name: exact("Go"), Hints: &domain.Hints{CSS: s.Nodes[clear].CSS}},
		{Role: "button", Scope: &domain.Scope{Region: "Member lookup"}, Ordinal: ptr(2)},
	} {
		if res, err := Resolve(s, d); err == nil && res.Node == clear {
			t.Errorf("Resolve(%s) found the hidden node", Describe(d))
		}
	}
}

func TestResolveMalformed(t *testing.T) {
	t.Parallel()
	s := desk(t)
	tests := []struct {
		name string
		d    domain.TargetDescriptor
	}{
		{"bad regex", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "(", Match: domain.MatchRegex}}},
		{"unknown match", domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "x", Match: "fuzzy"}}},
		{"empty name", domain.TargetDescriptor{Role: "button", Name: exact(" ")}},
		{"unknown relation", domain.TargetDescriptor{Role: "button", Anchor: &domain.Anchor{Relation: "near", Text: "x"}}},
		{"empty anchor", domain.TargetDescriptor{Role: "button", Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: "…"}}},
		{"ordinal zero", domain.TargetDescriptor{Role: "button", Ordinal: ptr(0)}},
		{"empty region", domain.TargetDescriptor{Role: "button", Scope: &domain.Scope{Region: "--"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Resolve(s, tt.d)
			if domain.ErrorCode(err) != domain.CodeCapabilityInvalid || res.Node != -1 {
				t.Errorf("Resolve = %+v, %v; want CAPABILITY_INVALID", res, err)
			}
		})
	}
	if _, err := Resolve(nil, domain.TargetDescriptor{Role: "button", Name: exact("x")}); domain.ErrorCode(err) != domain.CodeTargetNotFound {
		t.Errorf("nil snapshot: %v", err)
	}
}

func TestResolveAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	small := perception.Normalize(perception.Synthetic(1000, 1))
	large := perception.Normalize(perception.Synthetic(10000, 1))
	allocs := func(s *domain.UiSnapshot, d domain.TargetDescriptor) float64 {
		Resolve(s, d) // warm the pool
		return testing.AllocsPerRun(50, func() { Resolve(s, d) })
	}
	tests := []struct {
		d   domain.TargetDescriptor
		max float64 // allocations allowed on success; failures only must not grow
		ok  bool
	}{
		{domain.TargetDescriptor{Role: "button", Name: exact("Submit final")}, 1, true}, // Fold of the name
		{domain.TargetDescriptor{Role: "button", Name: exact("submit FINAL")}, 1, true},
		{domain.TargetDescriptor{Role: "button", Name: &domain.NameMatch{Value: "submit", Match: domain.MatchContains}}, 0, true},
		{domain.TargetDescriptor{Role: "button", Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: "Account 3.1"}}, 1, true},
		{domain.TargetDescriptor{Role: "cell", Anchor: &domain.Anchor{Relation: domain.RelRowOf, Text: "Account 3.1"}}, 0, false},
		{domain.TargetDescriptor{Role: "button", Name: exact("Nothing like it"), Anchor: &domain.Anchor{Relation: domain.RelAdjacentTo, Text: "Member ID"}, Hints: &domain.Hints{CSS: "x"}}, 0, false},
	}
	for _, tt := range tests {
		_, err := Resolve(small, tt.d)
		if (err == nil) != tt.ok {
			t.Fatalf("%s: %v", Describe(tt.d), err)
		}
		a, b := allocs(small, tt.d), allocs(large, tt.d)
		if b > a || (tt.ok && b > tt.max) {
			t.Errorf("%s: %v allocations at 1k nodes, %v at 10k", Describe(tt.d), a, b)
		}
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	d := domain.TargetDescriptor{
		Role:    "button",
		Name:    &domain.NameMatch{Value: "Search", Match: domain.MatchContains},
		Scope:   &domain.Scope{Frame: "content", Region: "Member"},
		Anchor:  &domain.Anchor{Relation: domain.RelRowOf, Text: "Savings Balance"},
		Ordinal: ptr(2),
		Hints:   &domain.Hints{CSS: "#go"},
	}
	want := `button "Search" (contains) in frame "content" region "Member" row_of "Savings Balance" #2 css "#go"`
	if got := Describe(d); got != want {
		t.Errorf("Describe = %s\nwant       %s", got, want)
	}
	if got := Describe(domain.TargetDescriptor{}); got != "*" {
		t.Errorf("Describe(empty) = %s", got)
	}
}

func TestResolveConcurrent(t *testing.T) {
	t.Parallel()
	s := desk(t)
	descs := []domain.TargetDescriptor{
		{Role: "button", Name: exact("Clear")},
		{Role: "searchbox", Name: &domain.NameMatch{Value: "quick", Match: domain.MatchContains}},
		{Role: "link", Name: &domain.NameMatch{Value: "^Mem", Match: domain.MatchRegex}},
		{Role: "button", Anchor: anchor(domain.RelRowOf, "Checking")},
		{Role: "button", Name: exact("Edit")},
	}
	want := make([]int, len(descs))
	for k, d := range descs {
		res, _ := Resolve(s, d)
		want[k] = res.Node
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			var err error
			for it := 0; it < 50 && err == nil; it++ {
				for k, d := range descs {
					if res, _ := Resolve(s, d); res.Node != want[k] {
						err = fmt.Errorf("%s: node %d, want %d", Describe(d), res.Node, want[k])
					}
				}
			}
			done <- err
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
