package replay

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/domain"
)

var (
	moneyGrouped = regexp.MustCompile(`^(-)?(?:\$|USD ?)(-)?([0-9]{1,3}(?:,[0-9]{3})*|[0-9]+)\.([0-9]{2})$`)
	usDate       = regexp.MustCompile(`^([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})$`)
)

// Money parses a US dollar amount ("$1,234.56", "USD 0.00", "-$5.00") into
// its canonical decimal ("1234.56"). The currency must be shown: a bare
// "1,234.56" could be any currency, so it is refused, as are other
// currencies' conventions ("1.234,56 €"), rather than guessed.
func Money(s string) (string, error) {
	m := moneyGrouped.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", fmt.Errorf("%q is not a US dollar amount", s)
	}
	if m[1] != "" && m[2] != "" {
		return "", fmt.Errorf("%q is not a US dollar amount", s)
	}
	sign := ""
	if m[1] != "" || m[2] != "" {
		sign = "-"
	}
	whole := strings.TrimLeft(strings.ReplaceAll(m[3], ",", ""), "0")
	if whole == "" {
		whole = "0"
	}
	if whole == "0" && m[4] == "00" {
		sign = ""
	}
	return sign + whole + "." + m[4], nil
}

// moneyAny is an amount with any shown currency: a symbol or ISO code
// before it, or a code after it, and US grouping (1,234.56).
var moneyAny = regexp.MustCompile(`^(-)?(?:(\$|€|£|¥|[A-Z]{3}) ?)?(-)?([0-9]{1,3}(?:,[0-9]{3})*|[0-9]+)\.([0-9]{2})(?: ?([A-Z]{3}|€|£|¥))?$`)

// currencySymbols maps a symbol to the ISO code it stands for here.
var currencySymbols = map[string]string{"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}

// MoneyIn parses an amount of the given ISO 4217 currency into its
// canonical decimal. With currency "" it is [Money]. Otherwise the page
// stated the currency elsewhere (a caption, a column header), so a bare
// amount ("1,234.56") is accepted, and so is one shown with that currency
// (its code before or after, or its symbol: $ USD, € EUR, £ GBP, ¥ JPY);
// an amount shown with any other currency is refused, as is any format
// other than comma grouping with a dot and two decimals.
func MoneyIn(s, currency string) (string, error) {
	if currency == "" {
		return Money(s)
	}
	m := moneyAny.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", fmt.Errorf("%q is not an amount", s)
	}
	if m[1] != "" && m[3] != "" || m[2] != "" && m[6] != "" {
		return "", fmt.Errorf("%q is not an amount", s)
	}
	shown := m[2] + m[6]
	if code, ok := currencySymbols[shown]; ok {
		shown = code
	}
	if shown != "" && shown != currency {
		return "", fmt.Errorf("%q is shown in %s, the output is in %s", s, shown, currency)
	}
	sign := ""
	if m[1] != "" || m[3] != "" {
		sign = "-"
	}
	whole := strings.TrimLeft(strings.ReplaceAll(m[4], ",", ""), "0")
	if whole == "" {
		whole = "0"
	}
	if whole == "0" && m[5] == "00" {
		sign = ""
	}
	return sign + whole + "." + m[5], nil
}

// Date parses "MM/DD/YYYY" or "YYYY-MM-DD" into "YYYY-MM-DD".
func Date(s string) (string, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.Format(time.DateOnly), nil
	}
	if m := usDate.FindStringSubmatch(s); m != nil {
		t, err := time.Parse("1/2/2006", m[1]+"/"+m[2]+"/"+m[3])
		if err == nil {
			return t.Format(time.DateOnly), nil
		}
	}
	return "", fmt.Errorf("%q is not a date", s)
}

var moneyCanon = regexp.MustCompile(`^-?[0-9]+\.[0-9]{2}$`)

// checkOutput validates an extracted value against its spec.
func checkOutput(spec domain.OutputSpec, v string) error {
	switch spec.Type {
	case domain.TypeMoney:
		if !moneyCanon.MatchString(v) {
			return fmt.Errorf("output %s: %q is not a canonical amount", spec.Name, v)
		}
	case domain.TypeDate:
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return fmt.Errorf("output %s: %q is not a date", spec.Name, v)
		}
	case domain.TypeEnum:
		if !slices.Contains(spec.Enum, v) {
			return fmt.Errorf("output %s: %q is not one of %v", spec.Name, v, spec.Enum)
		}
	case domain.TypeInteger:
		if !regexp.MustCompile(`^-?[0-9]+$`).MatchString(v) {
			return fmt.Errorf("output %s: %q is not an integer", spec.Name, v)
		}
	}
	if len(spec.Enum) > 0 && spec.Type != domain.TypeEnum && !slices.Contains(spec.Enum, v) {
		return fmt.Errorf("output %s: %q is not one of %v", spec.Name, v, spec.Enum)
	}
	if spec.Pattern != "" {
		re, err := regexp.Compile(`^(?:` + spec.Pattern + `)$`)
		if err != nil || !re.MatchString(v) {
			return fmt.Errorf("output %s: %q does not match %s", spec.Name, v, spec.Pattern)
		}
	}
	if v == "" {
		return fmt.Errorf("output %s is empty", spec.Name)
	}
	return nil
}
