package mockapp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   int64
		wantOK bool
	}{
		{"0", 0, true},
		{"100", 10000, true},
		{"100.5", 10050, true},
		{"100.05", 10005, true},
		{"$1,234.56", 123456, true},
		{"1,234,567", 123456700, true},
		{"999999999999.99", 99999999999999, true},
		{"", 0, false},
		{"$", 0, false},
		{".50", 0, false},
		{"1.", 0, false},
		{"1.234", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1,23", 0, false},
		{"1234,567", 0, false},
		{",123", 0, false},
		{"1 000", 0, false},
		{"1e3", 0, false},
		{"１００", 0, false},
		{"1000000000000", 0, false},
		{"$$1", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseMoney(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("parseMoney(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestFormatMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cents       int64
		want, plain string
	}{
		{0, "$0.00", "0.00"},
		{5, "$0.05", "0.05"},
		{123456, "$1,234.56", "1234.56"},
		{100000, "$1,000.00", "1000.00"},
		{1234567890, "$12,345,678.90", "12345678.90"},
	}
	for _, tt := range tests {
		if got := formatMoney(tt.cents); got != tt.want {
			t.Errorf("formatMoney(%d) = %q, want %q", tt.cents, got, tt.want)
		}
		if got := plainAmount(tt.cents); got != tt.plain {
			t.Errorf("plainAmount(%d) = %q, want %q", tt.cents, got, tt.plain)
		}
	}
}

func TestIsMemberNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"12345": true, "00000": true, "1234": false, "123456": false, "1234a": false, "１２３４５": false, "": false,
	} {
		if got := isMemberNumber(in); got != want {
			t.Errorf("isMemberNumber(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 100)
	got := clip(long)
	if len(got) > maxEcho || !utf8.ValidString(got) {
		t.Errorf("clip gave %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	if clip("short") != "short" {
		t.Error("clip changed a short string")
	}
}

func TestVariantHooks(t *testing.T) {
	t.Parallel()
	a, b, c := variant{VariantA}, variant{VariantB}, variant{VariantC}
	if a.ID("x") != "x" || a.Class("x") != "md-x" {
		t.Errorf("variant a hooks = %q %q", a.ID("x"), a.Class("x"))
	}
	if b.ID("x") == a.ID("x") || b.Class("x") == a.Class("x") || b.ID("x") == b.Class("x") {
		t.Error("variant b hooks are not churned")
	}
	if c.ID("x") != b.ID("x") {
		t.Error("variant c should share b's markup")
	}
	if a.SavingsLabel() != "Savings Balance" || b.SavingsLabel() != "Savings Balance" || c.SavingsLabel() != "Savings Bal." {
		t.Error("savings label")
	}
	if b.SearchButton() != "Search" || c.SearchButton() != "Find member" || b.SubmitButton() != "Submit transfer" || c.SubmitButton() != "Post transfer" {
		t.Error("button names")
	}
}
