package redact

import (
	"fmt"
	"strings"
	"testing"
)

// benchLiterals returns n password-like literals of 10 to 17 characters
// with varied first bytes, common letters included, as real passwords have.
func benchLiterals(n int) []string {
	const alphabet = "etaoinshrdluETAOIN0123456789!#%&*+-_"
	seed := uint32(2463534242)
	next := func() int {
		seed ^= seed << 13
		seed ^= seed >> 17
		seed ^= seed << 5
		return int(seed)
	}
	lits := make([]string, n)
	for i := range lits {
		b := make([]byte, 10+next()%8)
		for j := range b {
			b[j] = alphabet[next()%len(alphabet)]
		}
		lits[i] = string(b)
	}
	return lits
}

// benchText returns about size bytes of log-like text: prose, numbers,
// dates, amounts, URLs, key=value pairs, and now and then an email, a card
// number or one of lits.
func benchText(size int, lits []string) string {
	var b strings.Builder
	b.Grow(size + 256)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "2024-05-%02d 12:%02d:%02d INFO step dispatched run_id=run-%06d step=search_member amount=$%d,%03d.%02d status=ok url=https://app.test/members?page=%d ",
			i%28+1, i%60, i%60, i, i%10, i%1000, i%100, i%50)
		b.WriteString("The member record was located in the search results table and the outputs were extracted. ")
		switch i % 50 {
		case 7:
			fmt.Fprintf(&b, "contact user%d@example.com ", i)
		case 19:
			b.WriteString("card 4111 1111 1111 1111 ")
		case 31:
			b.WriteString("typed " + lits[i%len(lits)] + " ")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func BenchmarkString1MB(b *testing.B) {
	lits := benchLiterals(20)
	r := New(WithLiterals(lits...))
	text := benchText(1<<20, lits)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		_ = r.String(text)
	}
}

func BenchmarkString1MBNoMatches(b *testing.B) {
	r := New(WithLiterals(benchLiterals(20)...))
	text := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789 ", (1<<20)/55)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		_ = r.String(text)
	}
}

func BenchmarkStringShort(b *testing.B) {
	r := New(WithLiterals(benchLiterals(20)...))
	const msg = "step dispatched run_id=run-000042 strategy=semantic_exact"
	for b.Loop() {
		_ = r.String(msg)
	}
}

// nestedValue returns a map shaped like a run record with depth levels of
// nesting.
func nestedValue(depth int, lits []string) map[string]any {
	m := map[string]any{
		"run_id":   "run-000042",
		"status":   "SUCCESS",
		"count":    42,
		"ratio":    0.75,
		"ok":       true,
		"message":  "member found; contact jane@example.com, typed " + lits[0],
		"password": "hunter2",
		"tags":     []any{"a", "b", "card 4111111111111111", 7},
		"outputs":  map[string]any{"balance": "$1,234.56", "member": "M-1001"},
	}
	if depth > 0 {
		m["child"] = nestedValue(depth-1, lits)
		m["items"] = []any{nestedValue(depth-1, lits), nestedValue(depth-1, lits)}
	}
	return m
}

func BenchmarkValueNested(b *testing.B) {
	lits := benchLiterals(20)
	r := New(WithLiterals(lits...))
	v := nestedValue(4, lits) // 121 maps, about 1,100 leaves
	b.ResetTimer()
	for b.Loop() {
		_ = r.Value(v)
	}
}

func BenchmarkRegisterLiteral(b *testing.B) {
	lits := benchLiterals(20)
	for b.Loop() {
		r := New()
		for _, l := range lits {
			r.RegisterLiteral(l)
		}
	}
}

// BenchmarkRegisterAndRedact registers 20 literals one at a time, each
// followed by a redaction, so every registration costs a compilation.
func BenchmarkRegisterAndRedact(b *testing.B) {
	lits := benchLiterals(20)
	for b.Loop() {
		r := New()
		for _, l := range lits {
			r.RegisterLiteral(l)
			_ = r.String("step dispatched")
		}
	}
}

// BenchmarkRegisterLiteralInto1000 registers one more literal into a
// Redactor that already holds 1,000.
func BenchmarkRegisterLiteralInto1000(b *testing.B) {
	r := New(WithLiterals(benchLiterals(1000)...))
	i := 0
	for b.Loop() {
		i++
		r.RegisterLiteral(fmt.Sprintf("extra-literal-%08d", i))
		_ = r.String("step dispatched")
	}
}

// TestString1MB checks the output on 1 MB with 20 literals; the speed is
// measured by BenchmarkString1MB, never asserted in a unit test.
func TestString1MB(t *testing.T) {
	t.Parallel()
	lits := benchLiterals(20)
	r := New(WithLiterals(lits...))
	out := r.String(benchText(1<<20, lits))
	for _, l := range lits {
		if strings.Contains(out, l) {
			t.Errorf("literal %q survived", l)
		}
	}
	if strings.Contains(out, "4111 1111") || strings.Contains(out, "@example.com") {
		t.Error("pattern survived")
	}
}
