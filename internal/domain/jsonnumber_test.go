package domain

import (
	"encoding/json"
	"testing"
)

// TestValidJSONNumber agrees with encoding/json on literals at every edge
// of the grammar.
func TestValidJSONNumber(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "-0", "7", "-12", "10", "1.5", "0.25", "-0.0", "1e9", "1E+09", "2.5e-7", "123456789012345678901234567890",
		"", "-", "01", "-01", "1.", ".5", "1.e5", "1e", "1e+", "+1", "0x10", "1_000", " 1", "1 ", "NaN", "Infinity", "1.5.2", "--1", "1e5.0"} {
		want := json.Valid([]byte(s)) && s != "" && s[0] != ' ' && s[len(s)-1] != ' '
		if got := ValidJSONNumber(s); got != want {
			t.Errorf("ValidJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
