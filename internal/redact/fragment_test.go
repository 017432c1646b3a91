package redact

import (
	"strings"
	"testing"
)

func TestFragmentRedaction(t *testing.T) {
	t.Parallel()
	const secret = "Canary-7fQ2-zX9k-Lm4P-0042"
	r := New(WithLiterals(secret, "short-pw1"))
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"whole", "pw " + secret + " end", "pw [REDACTED] end"},
		{"truncated to 12", "pw Canary-7fQ2- end", "pw [REDACTED] end"},
		{"suffix of 14", "pw zX9k-Lm4P-0042!", "pw [REDACTED]!"},
		{"upper case", "PW " + strings.ToUpper(secret[3:20]) + ".", "PW [REDACTED]."},
		{"whitespace normalised", "pw canary - 7fq2 -\n zx9k tail", "pw [REDACTED] tail"},
		{"11 runes stay", "pw Canary-7fQ2 end", "pw Canary-7fQ2 end"},
		{"short literal folded whole", "pw short-pw1 and SHORT-PW1", "pw [REDACTED] and [REDACTED]"},
		{"short literal cut by two", "pw hort-pw and short-", "pw [REDACTED] and short-"},
		{"unrelated", "nothing of it here at all, Canary-", "nothing of it here at all, Canary-"},
		{"non-ascii around", "«Lm4P-0042Canary» x", "«Lm4P-0042Canary» x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestFragmentUnicode(t *testing.T) {
	t.Parallel()
	const secret = "Größenwahn-Passwort-ÄÖÜ"
	r := New(WithLiterals(secret))
	in := "x " + strings.ToUpper("wahn-Passwort-äö") + " y"
	if got := r.String(in); got != "x [REDACTED] y" {
		t.Errorf("String(%q) = %q", in, got)
	}
}

func TestReveals(t *testing.T) {
	t.Parallel()
	const secret = "Canary-7fQ2-zX9k-Lm4P-0042"
	tests := []struct {
		name    string
		text    string
		secrets []string
		want    bool
	}{
		{"whole", "welcome " + secret, []string{secret}, true},
		{"first 12", "welcome Canary-7fQ2-", []string{secret}, true},
		{"case and spaces", "CANARY 7FQ2 zx9k", []string{"Canary 7fQ2 zX9k"}, true},
		{"11 of a long one", "Canary-7fQ2", []string{secret}, false},
		{"short secret whole", "typed hunter2!", []string{"hunter2"}, true},
		{"short secret folded", "typed H U N T E R 2", []string{"hunter2"}, true},
		{"short secret cut", "operator OP100 signed on", []string{"OP1001"}, true},
		{"short secret in base64", "auth T1AxMDAx", []string{"OP1001"}, true},
		{"short secret inside a word", "stop 1001 items", []string{"OP1001"}, false},
		{"two-rune secret whole", "code x7!", []string{"x7"}, true},
		{"none", "balance 1234.56", []string{secret, "hunter2"}, false},
		{"empty secret ignored", "anything", []string{""}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Reveals(tc.text, tc.secrets...); got != tc.want {
				t.Errorf("Reveals(%q, %q) = %v, want %v", tc.text, tc.secrets, got, tc.want)
			}
		})
	}
}

// BenchmarkString1MBLongLiterals is BenchmarkString1MB with 20 literals of
// 12 to 27 characters, so the fragment index is active.
func BenchmarkString1MBLongLiterals(b *testing.B) {
	lits := benchLiterals(20)
	for i := range lits {
		lits[i] += lits[(i+1)%len(lits)][:2+i%9]
	}
	r := New(WithLiterals(lits...))
	text := benchText(1<<20, lits)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		_ = r.String(text)
	}
}
