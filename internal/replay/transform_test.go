package replay_test

import (
	"testing"

	"github.com/cuahq/cua/internal/replay"
)

func TestMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "$1,234.56", want: "1234.56"},
		{in: "1234.56", bad: true}, // no currency shown: refused, not guessed
		{in: "1,234.56", bad: true},
		{in: "$1234.56", want: "1234.56"},
		{in: " $12,345,678.90 ", want: "12345678.90"},
		{in: "USD 0.00", want: "0.00"},
		{in: "USD0.10", want: "0.10"},
		{in: "-$5.00", want: "-5.00"},
		{in: "$-5.00", want: "-5.00"},
		{in: "-$0.00", want: "0.00"},
		{in: "$007.50", want: "7.50"},
		{in: "1.234,56 €", bad: true},
		{in: "€1,234.56", bad: true},
		{in: "$1,23.45", bad: true},
		{in: "$1234.5", bad: true},
		{in: "$1,234", bad: true},
		{in: "12,34.56", bad: true},
		{in: "", bad: true},
		{in: "--5.00", bad: true},
		{in: "-$-5.00", bad: true},
		{in: "-USD -5.00", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := replay.Money(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("Money(%q) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Money(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "2026-11-30", want: "2026-11-30"},
		{in: "11/30/2026", want: "2026-11-30"},
		{in: "1/2/2026", want: "2026-01-02"},
		{in: " 01/02/2026 ", want: "2026-01-02"},
		{in: "2/29/2024", want: "2024-02-29"},
		{in: "2/29/2026", bad: true},
		{in: "30.11.2026", bad: true},
		{in: "30/11/2026", bad: true},
		{in: "2026-13-01", bad: true},
		{in: "Nov 30, 2026", bad: true},
		{in: "", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := replay.Date(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("Date(%q) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Date(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}
