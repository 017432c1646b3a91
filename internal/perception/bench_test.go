package perception

import (
	"strconv"
	"testing"
)

func BenchmarkNormalize(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		raw := Synthetic(n, 1)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Normalize(raw)
			}
		})
	}
}

func BenchmarkFold(b *testing.B) {
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = AppendFold(buf[:0], "Savings Balance: $1,234.56 — ÉCOLE")
	}
}
