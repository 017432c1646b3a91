package redact

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

type testBundle struct {
	r *Redactor
}

func setup(tb testing.TB, lits ...string) testBundle {
	tb.Helper()
	return testBundle{r: New(WithLiterals(lits...))}
}

func TestLiteralForms(t *testing.T) {
	t.Parallel()
	const secret = `p@ss w/rd<&>"'é`
	tests := []struct {
		name string
		in   string
	}{
		{"plain", "pw=" + secret + ";"},
		{"query escaped", "https://x.test/?pw=" + url.QueryEscape(secret) + "&a=1"},
		{"path escaped", "https://x.test/" + url.PathEscape(secret) + "/next"},
		{"lower-case hex", "pw=" + strings.ToLower(url.QueryEscape(secret))},
		{"json", `{"pw":"` + jsonEscape(secret, true) + `"}`},
		{"json without html escaping", `{"pw":"` + jsonEscape(secret, false) + `"}`},
		{"json ascii", `{"pw":"` + jsonASCII(secret) + `"}`},
		{"json escaped slash", `{"pw":"` + strings.ReplaceAll(jsonEscape(secret, true), "/", `\/`) + `"}`},
		{"html", "<td>" + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(secret, "&", "&amp;"), "<", "&lt;"), ">", "&gt;"), `"`, "&#34;"), "'", "&#39;") + "</td>"},
		{"html named entities", "<td>p@ss w/rd&lt;&amp;&gt;&quot;&#x27;é</td>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, secret)
			got := b.r.String(tt.in)
			if !strings.Contains(got, Marker) {
				t.Fatalf("String(%q) = %q, want a marker", tt.in, got)
			}
			if strings.Contains(got, "rd") {
				t.Errorf("String(%q) = %q still shows part of the literal", tt.in, got)
			}
		})
	}
}

func TestLiterals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		lits []string
		in   string
		want string
	}{
		{"every occurrence", []string{"hunter2"}, "hunter2 and hunter2.", "[REDACTED] and [REDACTED]."},
		{"adjacent occurrences merge", []string{"hunter2"}, "xhunter2hunter2y", "x[REDACTED]y"},
		{"nested, longest wins", []string{"abc", "abcdef"}, "1abcdef2abc3", "1[REDACTED]2[REDACTED]3"},
		{"nested inside", []string{"cde", "abcdefg"}, "abcdefg cde", "[REDACTED] [REDACTED]"},
		{"overlapping", []string{"abcd", "cdef"}, "xabcdefx", "x[REDACTED]x"},
		{"overlap where the later starts first", []string{"defgh", "abcdefghij"}, "__abcdefghij__", "__[REDACTED]__"},
		{"chain of overlaps", []string{"aab", "bba"}, "aabbaabba", "[REDACTED]"},
		{"self overlap", []string{"aaa"}, "aaaaa b", "[REDACTED] b"},
		{"case folded", []string{"Secret1"}, "secret1 Secret1 SECRET1", "[REDACTED] [REDACTED] [REDACTED]"},
		{"short literal registered but not matched", []string{"ab", "7"}, "ab 7 abc", "ab 7 abc"},
		{"three runes is enough", []string{"a1b"}, "xa1bx", "x[REDACTED]x"},
		{"three multibyte runes", []string{"日本語"}, "こんにちは日本語!", "こんにちは[REDACTED]!"},
		{"empty literal ignored", []string{""}, "text", "text"},
		{"no literals", nil, "plain text", "plain text"},
		{"literal beats pattern", []string{"jane@example.com"}, "to jane@example.com", "to [REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.lits...)
			if got := b.r.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRegisterLiteralLater(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if got := b.r.String("pw hunter2"); got != "pw hunter2" {
		t.Fatalf("before registration: %q", got)
	}
	b.r.RegisterLiteral("hunter2")
	b.r.RegisterLiteral("hunter2")
	if got := b.r.String("pw hunter2"); got != "pw [REDACTED]" {
		t.Fatalf("after registration: %q", got)
	}
}

func TestMinLiteralLength(t *testing.T) {
	t.Parallel()
	r := New(WithMinLiteralLength(1), WithLiterals("7"))
	if got := r.String("a7b"); got != "a[REDACTED]b" {
		t.Errorf("got %q", got)
	}
}

func TestManyLiterals(t *testing.T) {
	t.Parallel()
	// Enough literals to need several automaton chunks, and one too long for
	// an automaton.
	var lits []string
	for i := range 3000 {
		lits = append(lits, fmt.Sprintf("lit-%05d-%s", i, strings.Repeat(string(rune('a'+i%26)), 20+i%40)))
	}
	long := strings.Repeat("L0ng", 1500)
	lits = append(lits, long)
	b := setup(t, lits...)
	if n := len(b.r.m.chunks()); n < 2 {
		t.Fatalf("chunks = %d, want several", n)
	}
	for _, i := range []int{0, 1234, 2999} {
		in := "<" + lits[i] + ">"
		if got := b.r.String(in); got != "<[REDACTED]>" {
			t.Errorf("literal %d: got %q", i, got)
		}
	}
	if got := b.r.String("x" + long + "y"); got != "x[REDACTED]y" {
		t.Errorf("long literal: got %.40q", got)
	}
}

func TestManyLiteralsOneByOne(t *testing.T) {
	t.Parallel()
	// Long literals over many distinct bytes fill a chunk after a few
	// registrations.
	var printable []byte
	for c := byte('!'); c <= '~'; c++ {
		printable = append(printable, c)
	}
	r := New()
	var lits []string
	for i := range 24 {
		lit := fmt.Sprintf("%03d:%s", i, printable[i:]) + string(printable[:i])
		lits = append(lits, lit)
		r.RegisterLiteral(lit)
		_ = r.String("x") // compiles what was registered
	}
	if n := len(r.m.chunks()); n < 2 {
		t.Fatalf("chunks = %d, want several", n)
	}
	for i, lit := range lits {
		for _, in := range []string{lit, url.QueryEscape(lit), jsonEscape(lit, true)} {
			// The literals are rotations of one another, so a printable
			// neighbour would extend a 12-rune fragment match; « » is in
			// none of them.
			if got := r.String("«" + in + "»"); got != "«[REDACTED]»" {
				t.Errorf("literal %d as %q: got %q", i, in, got)
			}
		}
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	b := setup(t, "hunter2")
	in := []byte("nothing here")
	if got := b.r.Bytes(in); &got[0] != &in[0] {
		t.Error("unchanged input was copied")
	}
	if got := string(b.r.Bytes([]byte("pw=hunter2"))); got != "pw=[REDACTED]" {
		t.Errorf("got %q", got)
	}
	if got := b.r.Bytes(nil); got != nil {
		t.Errorf("Bytes(nil) = %q", got)
	}
}

func TestConcurrentRegisterAndRedact(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		lit := fmt.Sprintf("secret-%03d", i)
		go func() {
			defer wg.Done()
			b.r.RegisterLiteral(lit)
			// Registered before this call: must be redacted.
			if got := b.r.String("x " + lit + " y"); strings.Contains(got, lit) {
				t.Errorf("%s survived: %q", lit, got)
			}
		}()
		go func() {
			defer wg.Done()
			for j := range 20 {
				_ = b.r.String(fmt.Sprintf("secret-%03d and mail%d@example.com", j, j))
				_ = b.r.Value(map[string]any{"k": "secret-001"})
			}
		}()
	}
	wg.Wait()
	for i := range n {
		lit := fmt.Sprintf("secret-%03d", i)
		if got := b.r.String(lit); got != Marker {
			t.Errorf("%s: got %q", lit, got)
		}
	}
}

// markers matches everything the redactor writes in place of a secret.
var markers = regexp.MustCompile(`\[REDACTED(?::[a-z]+)?\]|\*\*\*\*`)

func FuzzString(f *testing.F) {
	f.Add("hunter2", "user typed ", " into the box")
	f.Add("p@ss/w<rd>", `{"a":"`, `"}`)
	f.Add("aaa", "aa", "aa")
	f.Add("4111", "card 4111 1111 1111 ", "1111")
	f.Add("sk-", "key ", "abcdefghijklmnopqrstuvwxyz")
	f.Add("déjà vu", "%", "&amp;")
	f.Fuzz(func(t *testing.T, lit, before, after string) {
		if len([]rune(lit)) < 3 || strings.ContainsRune(lit, 0) {
			t.Skip()
		}
		r := New(WithLiterals(lit))
		inputs := []string{lit + before + lit + after + lit}
		for _, form := range literalForms(lit) {
			inputs = append(inputs, before+form+after)
		}
		for _, in := range inputs {
			out := r.String(in)
			// Each marker stands for removed text; no form of the literal may
			// survive in the text that remains, nor be spliced across a
			// marker.
			rest := markers.ReplaceAllString(out, "\x00")
			for _, form := range literalForms(lit) {
				if strings.Contains(rest, form) {
					t.Fatalf("%q (a form of %q) survived:\n in: %q\nout: %q", form, lit, in, out)
				}
			}
		}
	})
}

// TestNotLabels (issue 24 item 8): a step id or outcome code the run named
// as its own, and cua's own record fields, are never credential labels;
// the same words written by a page still are.
func TestNotLabels(t *testing.T) {
	t.Parallel()
	r := New()
	r.NotLabels("enter_password", "wrong_pin_token")
	tests := []struct{ in, want string }{
		{"step enter_password: dispatch type: timeout", "step enter_password: dispatch type: timeout"},
		{"outcome wrong_pin_token: the PIN was refused", "outcome wrong_pin_token: the PIN was refused"},
		{"idempotency_key: nightly-42", "idempotency_key: nightly-42"},
		{"password: hunter2", "password: [REDACTED:secret]"},
		{"Enter_Password: hunter2", "Enter_Password: [REDACTED:secret]"},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := New().String("step enter_password: dispatch type: timeout"); got == "step enter_password: dispatch type: timeout" {
		t.Error("without NotLabels the step id reads as a label; the test would not catch a regression")
	}
}
