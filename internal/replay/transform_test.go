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

func TestMoneyIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, cur, want string
		bad           bool
	}{
		{in: "1,234.56", cur: "USD", want: "1234.56"}, // currency only in a caption
		{in: "1234.56", cur: "USD", want: "1234.56"},
		{in: "-1,234.56", cur: "USD", want: "-1234.56"},
		{in: "$1,234.56", cur: "USD", want: "1234.56"},
		{in: "USD 1,234.56", cur: "USD", want: "1234.56"},
		{in: "1,234.56 USD", cur: "USD", want: "1234.56"},
		{in: "€1,234.56", cur: "EUR", want: "1234.56"},
		{in: "1,234.56", cur: "", bad: true}, // no currency anywhere: Money's rule
		{in: "€1,234.56", cur: "USD", bad: true},
		{in: "EUR 1,234.56", cur: "USD", bad: true},
		{in: "1,234.56 GBP", cur: "USD", bad: true},
		{in: "$1,234.56", cur: "EUR", bad: true},
		{in: "$1.00 USD", cur: "USD", bad: true},
		{in: "1.234,56", cur: "USD", bad: true},
		{in: "CA$5.00", cur: "USD", bad: true},
		{in: "-$-5.00", cur: "USD", bad: true},
		{in: "1,234.5", cur: "USD", bad: true},
		{in: "", cur: "USD", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.cur+" "+tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := replay.MoneyIn(tc.in, tc.cur)
			if tc.bad {
				if err == nil {
					t.Fatalf("MoneyIn(%q, %q) = %q, want an error", tc.in, tc.cur, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("MoneyIn(%q, %q) = %q, %v; want %q", tc.in, tc.cur, got, err, tc.want)
			}
		})
	}
}

func TestStripPrefix(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Name: Jane Roe":  "Jane Roe",
		"name:Jane Roe":   "Jane Roe",
		" Jane Roe ":      "Jane Roe",
		"Names: Jane":     "Names: Jane",
		"Nam":             "Nam",
		"Name — Jane Roe": "Jane Roe",
		"Name:\u00a0Jane": "Jane",
	} {
		if got := replay.StripPrefix(in, "Name"); got != want {
			t.Errorf("StripPrefix(%q, Name) = %q, want %q", in, got, want)
		}
	}
}
