package capability

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestCompareUTF16 holds compareUTF16 to the definition it replaces:
// slices.Compare of the strings' UTF-16 code units.
func TestCompareUTF16(t *testing.T) {
	t.Parallel()
	words := []string{"", "a", "A", "aa", "ab", "b", "\u0080", "\u00f6", "\u20ac", "\ud7ff", "\ue000",
		"\ufb33", "\uffff", "\U00010000", "\U0001f600", "\U0001f601", "\U0010ffff", "a\U0001f600", "a\uffff", "a\u00f6b", "a\u00f6"}
	for _, a := range words {
		for _, b := range words {
			want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
			if got := compareUTF16(a, b); got != want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestCanonicalJSONOrderAndDuplicates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, err string
	}{
		{name: "sorted input is kept", in: `{"a":1,"b":{"c":2,"d":[3]}}`, want: `{"a":1,"b":{"c":2,"d":[3]}}`},
		{name: "unsorted input is sorted", in: `{"d":[3],"b":{"d":2,"c":1},"a":0}`, want: `{"a":0,"b":{"c":1,"d":2},"d":[3]}`},
		{name: "supplementary before U+E000", in: `{"\ue000":1,"\ud83d\ude00":2}`, want: "{\"\U0001f600\":2,\"\ue000\":1}"},
		{name: "adjacent duplicate", in: `{"a":1,"a":2}`, err: `duplicate member name "a"`},
		{name: "distant duplicate in unsorted input", in: `{"b":1,"a":2,"b":3}`, err: `duplicate member name "b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := CanonicalJSON(context.Background(), []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
