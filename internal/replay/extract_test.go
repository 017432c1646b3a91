package replay

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

func extractCap(out domain.OutputSpec) *domain.Capability {
	out.Name = "value"
	out.Source = domain.OutputSource{Step: "read"}
	return &domain.Capability{ID: "test.extract", Version: "1.0.0", Outputs: []domain.OutputSpec{out}}
}

func TestExtractValue(t *testing.T) {
	t.Parallel()
	cell := &domain.TargetDescriptor{Role: "cell"}
	tests := []struct {
		name   string
		out    domain.OutputSpec
		target *domain.TargetDescriptor
		tr     domain.Transform
		text   string
		want   string
		bad    string // substring of the error
	}{
		{name: "no transform trims", out: domain.OutputSpec{Type: domain.TypeString}, text: "  Active \n", want: "Active"},
		{name: "trim", out: domain.OutputSpec{Type: domain.TypeString}, tr: domain.TransformTrim, text: "\tJane Roe ", want: "Jane Roe"},
		{name: "trim money output parses", out: domain.OutputSpec{Type: domain.TypeMoney}, tr: domain.TransformTrim, text: " $1,234.56 ", want: "1234.56"},
		{name: "money", out: domain.OutputSpec{Type: domain.TypeMoney}, tr: domain.TransformMoney, text: "$1,234.56", want: "1234.56"},
		{name: "money bare refused without currency", out: domain.OutputSpec{Type: domain.TypeMoney}, tr: domain.TransformMoney, text: "1,234.56", bad: "not a US dollar amount"},
		{name: "money bare with declared currency", out: domain.OutputSpec{Type: domain.TypeMoney, Currency: "USD"}, tr: domain.TransformMoney, text: "1,234.56", want: "1234.56"},
		{name: "money other currency with declared", out: domain.OutputSpec{Type: domain.TypeMoney, Currency: "USD"}, tr: domain.TransformMoney, text: "EUR 1,234.56", bad: "shown in EUR"},
		{name: "date", out: domain.OutputSpec{Type: domain.TypeDate}, tr: domain.TransformDate, text: "11/30/2026", want: "2026-11-30"},
		{name: "regex group", out: domain.OutputSpec{Type: domain.TypeString}, tr: domain.Transform{Regex: `Name: (.+)`}, text: "Name: Jane Roe", want: "Jane Roe"},
		{name: "regex no match", out: domain.OutputSpec{Type: domain.TypeString}, tr: domain.Transform{Regex: `Name: (.+)`}, text: "Jane Roe", bad: "does not match"},
		{name: "regex two groups", out: domain.OutputSpec{Type: domain.TypeString}, tr: domain.Transform{Regex: `(N)ame: (.+)`}, text: "Name: Jane", bad: "exactly one capture group"},
		{name: "regex then money", out: domain.OutputSpec{Type: domain.TypeMoney, Currency: "USD"}, tr: domain.Transform{Regex: `Balance (\S+)`}, text: "Balance 1,000.00", want: "1000.00"},
		{name: "strip prefix one node", out: domain.OutputSpec{Type: domain.TypeString}, tr: domain.Transform{StripPrefix: "Name:"}, text: "Name: Jane Roe", want: "Jane Roe"},
		{name: "strip prefix split node", out: domain.OutputSpec{Type: domain.TypeString}, tr: domain.Transform{StripPrefix: "Name:"}, text: "Jane Roe", want: "Jane Roe"},
		{name: "strip prefix case and spaces", out: domain.OutputSpec{Type: domain.TypeString}, tr: domain.Transform{StripPrefix: "Member  name"}, text: "MEMBER NAME - Jane", want: "Jane"},
		{name: "strip prefix then date", out: domain.OutputSpec{Type: domain.TypeDate}, tr: domain.Transform{StripPrefix: "Opened"}, text: "Opened: 1/2/2026", want: "2026-01-02"},
		{name: "regex name narrows", out: domain.OutputSpec{Type: domain.TypeMoney}, target: &domain.TargetDescriptor{Role: "cell", Name: &domain.NameMatch{Value: `\$[0-9,.]+`, Match: domain.MatchRegex}}, tr: domain.TransformMoney, text: "Balance $12.00 available", want: "12.00"},
		{name: "regex name leaves a regex transform the whole text", out: domain.OutputSpec{Type: domain.TypeString}, target: &domain.TargetDescriptor{Role: "text", Name: &domain.NameMatch{Value: `^Name:`, Match: domain.MatchRegex}}, tr: domain.Transform{Regex: `Name: (.+)`}, text: "Name: Jane Roe", want: "Jane Roe"},
		{name: "regex name leaves strip_prefix the whole text", out: domain.OutputSpec{Type: domain.TypeString}, target: &domain.TargetDescriptor{Role: "text", Name: &domain.NameMatch{Value: `^Name`, Match: domain.MatchRegex}}, tr: domain.Transform{StripPrefix: "Name:"}, text: "Name: Jane Roe", want: "Jane Roe"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := extractCap(tc.out)
			st := &domain.Step{ID: "read", Action: domain.ActExtract, Target: cell, Into: "value", Transform: tc.tr}
			if tc.target != nil {
				st.Target = tc.target
			}
			got, err := extractValue(c, st, tc.text, nil)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "output value") {
					t.Fatalf("extractValue(%q) = %q, %v; want an error naming the output and containing %q", tc.text, got, err, tc.bad)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("extractValue(%q) = %q, %v; want %q", tc.text, got, err, tc.want)
			}
		})
	}
}

// TestExtractValueRegistersSensitiveBeforeTransform proves a sensitive
// value is registered with the redactor before its transform runs: the
// transform fails here, and the raw text must already be registered, and
// the error must not quote it.
func TestExtractValueRegistersSensitiveBeforeTransform(t *testing.T) {
	t.Parallel()
	const raw = "SSN 123-45-6789 on file"
	for _, tc := range []struct {
		name string
		tr   domain.Transform
		ok   bool
	}{
		{"failing transform", domain.TransformMoney, false},
		{"regex", domain.Transform{Regex: `SSN (\S+)`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := extractCap(domain.OutputSpec{Type: domain.TypeString, Sensitive: true})
			st := &domain.Step{ID: "read", Action: domain.ActExtract, Target: &domain.TargetDescriptor{Role: "cell"}, Into: "value", Transform: tc.tr}
			var got []string
			val, err := extractValue(c, st, "  "+raw+" ", func(s string) { got = append(got, s) })
			if len(got) == 0 || got[0] != raw {
				t.Fatalf("registered %q, want %q first", got, raw)
			}
			if tc.ok {
				if err != nil || val != "123-45-6789" || !slices.Contains(got, val) {
					t.Fatalf("value %q, %v; registered %q", val, err, got)
				}
				return
			}
			if err == nil {
				t.Fatalf("money transform of %q succeeded", raw)
			}
			if strings.Contains(err.Error(), "123-45") {
				t.Fatalf("error quotes the sensitive value: %v", err)
			}
		})
	}
}

func TestExtractValueNotSensitiveRegistersNothing(t *testing.T) {
	t.Parallel()
	c := extractCap(domain.OutputSpec{Type: domain.TypeString})
	st := &domain.Step{ID: "read", Action: domain.ActExtract, Target: &domain.TargetDescriptor{Role: "cell"}, Into: "value"}
	called := false
	if v, err := extractValue(c, st, "Active", func(string) { called = true }); err != nil || v != "Active" || called {
		t.Fatalf("value %q, %v, registered %v", v, err, called)
	}
}
