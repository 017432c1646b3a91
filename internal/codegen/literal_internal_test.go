package codegen

import (
	"strings"
	"testing"
)

// TestRegexSource: Go patterns become JavaScript sources that match the
// same strings, or are refused.
func TestRegexSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, wantErr string
	}{
		{in: `TRF-[0-9]{4}`, want: `TRF-[0-9]{4}`},
		{in: `a.b`, want: `a[^\n]b`},
		{in: `[.]`, want: `[.]`},
		{in: `\s+x\S`, want: `[\t\n\f\r ]+x[^\t\n\f\r ]`},
		{in: `[\s,]`, want: `[\t\n\f\r ,]`},
		{in: `[]a]`, want: `[\]a]`},
		{in: `[^]a]`, want: `[^\]a]`},
		{in: `\.\$`, want: `\.\$`},
		{in: `(?:ab)+`, want: `(?:ab)+`},
		{in: `(?i)ab`, wantErr: "flags"},
		{in: `(?P<n>a)`, wantErr: "flags"},
		{in: `\Aab\z`, wantErr: `\A`},
		{in: `\pL`, wantErr: `\p`},
		{in: `[[:alpha:]]`, wantErr: "POSIX"},
		{in: `[\S]`, wantErr: `\S in a class`},
		{in: `(`, wantErr: "does not compile"},
	}
	for _, tt := range tests {
		got, err := regexSource(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("regexSource(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("regexSource(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestFold follows perception.Fold's rule.
func TestFold(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Sign-in":            "signin",
		"  Member   Search ": "member search",
		"Savings Bal.":       "savings bal",
		"- / -":              "",
		"ÉCOLE Straße":       "école straße",
	} {
		if got := fold(in); got != want {
			t.Errorf("fold(%q) = %q, want %q", in, got, want)
		}
	}
}
