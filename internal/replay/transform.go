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
