package perception

import (
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func TestCleanName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"Search", "Search"},
		{"  Member\u00a0ID  ", "Member ID"},
		{"Savings\n\tBalance", "Savings Balance"},
		{"Zero\u200bwidth\u200d\ufeff", "Zerowidth"},
		{"soft\u00adhyphen", "softhyphen"},
		{"\u200b \u200b", ""},
		{"a\u2003\u3000b", "a b"},
		{"Ünïcode  Nämé", "Ünïcode Nämé"},
	}
	for _, tt := range tests {
		if got := CleanName(tt.in); got != tt.want {
			t.Errorf("CleanName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFold(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"search", "search"},
		{"Search", "search"},
		{"  SEARCH  members ", "search members"},
		{"Member\u00a0ID:", "member id"},
		{"$1,234.56", "123456"},
		{"Sign-in", "signin"},
		{"A - B", "a b"},
		{"Find member…", "find member"},
		{"ÉCOLE Straße", "école straße"},
		{"ΣΊΣΥΦΟΣ σίσυφος", "σίσυφοσ σίσυφοσ"},
		{"\u212a", "k"}, // KELVIN SIGN
		{"Zero\u200bwidth", "zerowidth"},
		{"数字 ١٢٣", "数字 ١٢٣"},
		{"e\u0301", "e\u0301"}, // combining marks are kept
		{"!!!", ""},
		{"\xff\xfeok", "ok"},
	}
	for _, tt := range tests {
		if got := Fold(tt.in); got != tt.want {
			t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !FoldEqual(tt.in, tt.want) {
			t.Errorf("FoldEqual(%q, %q) = false", tt.in, tt.want)
		}
		if Fold(tt.want) != tt.want {
			t.Errorf("Fold is not idempotent on %q", tt.want)
		}
	}
}

func TestFoldEqualAgreesWithFold(t *testing.T) {
	t.Parallel()
	words := []string{"", " ", "a", "A", "ab", "a b", "a  b", "-", "é", "É", "σ", "ς", "ß", "K", "\u212a", "1", "$", "\u00a0", "\u200b", "\xff"}
	for _, x := range words {
		for _, y := range words {
			for _, z := range words {
				s := x + y + z
				f := Fold(s)
				for _, other := range words {
					o := Fold(other)
					if got := FoldEqual(s, o); got != (f == o) {
						t.Fatalf("FoldEqual(%q, %q) = %v, Fold = %q", s, o, got, f)
					}
				}
				if !FoldEqual(s, f) {
					t.Fatalf("FoldEqual(%q, Fold) = false", s)
				}
			}
		}
	}
}

func TestFoldAllocations(t *testing.T) {
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		_ = FoldEqual("Savings  Balance:", "savings balance")
		buf = AppendFold(buf[:0], "Savings  Balance:")
		_ = Fold("already folded")
		_ = CleanName("Already clean")
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	raw := loadRaw(t, "dropping.json")
	s := Normalize(raw)
	long := strings.Repeat("word ", 2000)
	big := &domain.UiSnapshot{Nodes: []domain.Node{
		{Role: "cell", Parent: -1, Children: []int{1, 2}},
		{Role: "text", Name: long, Parent: 0},
		{Role: "text", Name: long, Parent: 0},
	}}
	cyclic := &domain.UiSnapshot{Nodes: []domain.Node{
		{Role: "cell", Parent: 1, Children: []int{1, 0}},
		{Role: "text", Name: "loop", Parent: 0, Children: []int{0}},
	}}
	tests := []struct {
		name string
		s    *domain.UiSnapshot
		i    int
		want string
	}{
		{"named node", s, byName(t, s, "button", "Search").Index, "Search"},
		{"unnamed label", s, byName(t, s, "label", "").Index, "Member ID"},
		{"paragraph joins text", s, byName(t, s, "paragraph", "").Index, "Line one"},
		{"whole document by name", s, 0, "Member search"},
		{"out of range", s, -1, ""},
		{"nil snapshot", nil, 0, ""},
		{"text value", &domain.UiSnapshot{Nodes: []domain.Node{{Role: "text", Value: "v", Parent: -1}}}, 0, "v"},
		{"cycle terminates", cyclic, 0, "loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.s, tt.i); got != tt.want {
				t.Errorf("Text = %q, want %q", got, tt.want)
			}
		})
	}
	if got := Text(big, 0); len(got) != MaxText {
		t.Errorf("bounded text has %d bytes", len(got))
	}
	label := byName(t, s, "label", "").Index
	for _, tt := range []struct {
		folded string
		want   bool
	}{{"member id", true}, {"member", false}, {"member id x", false}, {"other", false}, {"", false}} {
		if got, _ := TextFoldEqual(nil, s, label, tt.folded); got != tt.want {
			t.Errorf("TextFoldEqual(%q) = %v", tt.folded, got)
		}
	}
	if got, _ := TextFoldEqual(nil, big, 0, "word"); got {
		t.Error("TextFoldEqual matched a prefix of a long text")
	}
}
