package recorder

import (
	"regexp"
	"testing"
)

func TestShapePattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lit, want string
		ok        bool
	}{
		{"12345", "[0-9]{5}", true},
		{"7", "[0-9]", true},
		{"Smith", "[A-Za-z]{5}", true},
		{"AB-1234", "[A-Za-z]{2}-[0-9]{4}", true},
		{"11/30/2026", "[0-9]{2}/[0-9]{2}/[0-9]{4}", true},
		{"a.b", `[A-Za-z]\.[A-Za-z]`, true},
		{"x--1", "[A-Za-z]--[0-9]", true},
		{"(555)123", `\([0-9]{3}\)[0-9]{3}`, true},
		{"A-1-B-2", "", false}, // more than five runs: free text
		{"Jane Doe", "", false},
		{"café", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.lit, func(t *testing.T) {
			t.Parallel()
			got, ok := shapePattern(tc.lit)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("shapePattern(%q) = %q, %v; want %q, %v", tc.lit, got, ok, tc.want, tc.ok)
			}
			if ok && !regexp.MustCompile(`^(?:`+got+`)$`).MatchString(tc.lit) {
				t.Errorf("%q does not match its own pattern %q", tc.lit, got)
			}
		})
	}
}

func TestIdent(t *testing.T) {
	t.Parallel()
	tests := []struct{ label, want string }{
		{"Member number", "member_number"},
		{"memberId", "member_id"},
		{"  Savings  Balance: ", "savings_balance"},
		{"2FA code", "input_2fa_code"},
		{"Código", "c_digo"},
		{"***", "input"},
		{"", "input"},
	}
	for _, tc := range tests {
		if got := ident(tc.label, "input", maxName); got != tc.want {
			t.Errorf("ident(%q) = %q, want %q", tc.label, got, tc.want)
		}
	}
	long := ident("a very long label that goes on and on and on well past the limit of names", "input", 20)
	if len(long) > 20 || long[len(long)-1] == '_' {
		t.Errorf("long ident = %q", long)
	}
}

func TestInGoal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		goal, lit string
		want      bool
	}{
		{"Look up member 12345", "12345", true},
		{"Look up member 12345.", "12345", true},
		{"Look up member 123456", "12345", false},
		{"Look up member 012345", "12345", false},
		{"Pay $25.00 now", "$25.00", true},
		{"Pay $25.00 now", "25.00", true},
		{"Transfer to Checking", "Check", false},
		{"Find Jane Doe today", "Jane Doe", true},
		{"anything", " ", false},
	}
	for _, tc := range tests {
		if got := inGoal(tc.goal, tc.lit); got != tc.want {
			t.Errorf("inGoal(%q, %q) = %v, want %v", tc.goal, tc.lit, got, tc.want)
		}
	}
	if got := replaceToken("member 12345 not 123456, again 12345", "12345", "<m>"); got != "member <m> not 123456, again <m>" {
		t.Errorf("replaceToken = %q", got)
	}
}

func TestTextShape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"$1,234.56": "$9,999.99", "Active": "Aaaaaa", "11/30/2026": "99/99/9999", "TRF-0001": "AAA-9999"} {
		if got := textShape(in); got != want {
			t.Errorf("textShape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMoneyValue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"$1,234.56": "1234.56", "-$5.00": "-5.00", "$-0.00": "0.00", "0025.50": "25.50", "USD 12.00": "12.00"} {
		if got, ok := moneyValue(in); !ok || got != want {
			t.Errorf("moneyValue(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"12", "1,23.00", "$1.5", "€5.00", "-$-5.00"} {
		if got, ok := moneyValue(in); ok {
			t.Errorf("moneyValue(%q) = %q, want refused", in, got)
		}
	}
}
