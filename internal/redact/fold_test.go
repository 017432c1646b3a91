package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
)

// TestShortSecretNeverReachesASink is issue 23 item 5: a secret under
// FragmentLen runes (MemberDesk's operator id) echoed folded, spaced, cut
// or encoded is redacted wherever it appears.
func TestShortSecretNeverReachesASink(t *testing.T) {
	t.Parallel()
	const secret = "OP1001"
	r := New(WithLiterals(secret))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	pct := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
		}
		return b.String()
	}
	tests := []struct {
		name, in string
		gone     []string // none of these may survive
	}{
		{"whole", "Signed on as OP1001", []string{"OP1001"}},
		{"lower case", "signed on as op1001.", []string{"op1001"}},
		{"mixed case", "id=Op1001;", []string{"Op1001"}},
		{"spaced", "operator O P 1 0 0 1 here", []string{"O P 1 0 0 1", "1 0 0 1"}},
		{"tabs and newlines", "id:\tOP 10\n01", []string{"OP 10\n01"}},
		{"cut at the end", "operator OP100 signed on", []string{"OP100"}},
		{"cut at the start", "operator P1001 signed on", []string{"P1001"}},
		{"cut and lower case", "operator op100", []string{"op100"}},
		{"cut and spaced", "operator O P 1 0 0", []string{"O P 1 0 0"}},
		{"inside a word", "xOP1001y", []string{"OP1001"}},
		{"base64", "Authorization: Basic " + b64(secret), []string{b64(secret)}},
		{"base64 inside a longer value", "Basic " + b64("user:"+secret), []string{b64("user:" + secret)[8:]}},
		{"spaced hex dump", "dump 4f 50 31 30 30 31 end", []string{"4f 50 31 30 30 31"}},
		{"base64 url alphabet unpadded", "t=" + strings.TrimRight(base64.URLEncoding.EncodeToString([]byte(secret+"x")), "="), []string{"T1AxMDAx"}},
		{"hex", "id=" + hex.EncodeToString([]byte(secret)), []string{hex.EncodeToString([]byte(secret))}},
		{"upper-case hex", "id=" + strings.ToUpper(hex.EncodeToString([]byte(secret))), []string{strings.ToUpper(hex.EncodeToString([]byte(secret)))}},
		{"url-encoded every byte", "q=" + pct(secret), []string{pct(secret)}},
		{"url-encoded lower hex", "q=" + strings.ToLower(pct(secret)), []string{strings.ToLower(pct(secret))}},
		{"query escaped", "https://x.test/?op=" + url.QueryEscape(secret), []string{secret}},
		{"json", `{"operator":"op1001"}`, []string{"op1001"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := r.String(tc.in)
			if !strings.Contains(got, Marker) {
				t.Fatalf("String(%q) = %q, want a marker", tc.in, got)
			}
			for _, g := range tc.gone {
				if strings.Contains(got, g) {
					t.Errorf("String(%q) = %q still holds %q", tc.in, got, g)
				}
			}
			if fs := r.Find(tc.in); len(fs) == 0 || fs[0].Kind != KindLiteral {
				t.Errorf("Find(%q) = %+v, want a literal", tc.in, fs)
			}
			if !Reveals(tc.in, secret) {
				t.Errorf("Reveals(%q) = false", tc.in)
			}
		})
	}
}

// TestShortSecretLeavesOrdinaryText: the folded and cut rules of short
// literals do not eat what merely resembles them.
func TestShortSecretLeavesOrdinaryText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, secret, in string
	}{
		{"spaced across words", "OP1001", "please stop 1001 times"},
		{"cut across words", "OP1001", "stop 100 meters"},
		{"two-character cut of a six", "OP1001", "room 1001 and OP10 and P100"},
		{"digits-only secret is not cut", "482913", "member 48291 and 82913"},
		{"cut to a plain word", "hunter2", "the hunter came"},
		{"five-rune secret is not cut", "ab123", "ab12 b123"},
		{"eight: three cut", "Pass-1234", "Pass-1 and s-1234"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := New(WithLiterals(tc.secret))
			if got := r.String(tc.in); got != tc.in {
				t.Errorf("secret %q: String(%q) = %q, want it unchanged", tc.secret, tc.in, got)
			}
		})
	}
}

// TestCutRules: a literal of CutMinLen runes or more is caught with up to
// two characters cut from its ends in all; FragmentLen-rune literals lose
// cuts the fragment windows miss.
func TestCutRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		secret, in string
		want       bool
	}{
		{"Pass-1234", "x ass-1234 y", true},
		{"Pass-1234", "x Pass-123 y", true},
		{"Pass-1234", "x ss-1234 y", true},
		{"Pass-1234", "x PASS-12 y", true},
		{"Pass-1234", "x ass-123 y", true},
		{"Pass-1234", "x p a s s - 1 2 y", true},
		{"Pass-1234", "x s-1234 y", false},
		{"Teller-Pass", "x eller-Pas y", true},
		{"teller-pass-1", "x ller-pass-1 y", true},     // 13 runes cut by two: 11
		{"teller-pass-1", "x eller-pass- y", true},     // cut by one at each end
		{"teller-pass-1", "x teller-pass- y", true},    // 12 runes: a fragment
		{"teller-pass-1", "x ler-pass-1 y", false},     // cut by three
		{"Canary-7fQ2-zX9k", "x ary-7fQ2-zX9 y", true}, // 12-run window
	}
	for _, tc := range tests {
		r := New(WithLiterals(tc.secret))
		got := r.String(tc.in) != tc.in
		if got != tc.want {
			t.Errorf("secret %q in %q: redacted %v, want %v (%q)", tc.secret, tc.in, got, tc.want, r.String(tc.in))
		}
	}
}

func TestFoldedNonASCII(t *testing.T) {
	t.Parallel()
	r := New(WithLiterals("Ärger42"))
	for _, in := range []string{"x ärger42 y", "x Ä R G E R 4 2 y", "x ÄRGER4 y", "x rger42 y"} {
		if got := r.String(in); got != "x [REDACTED] y" {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
}
