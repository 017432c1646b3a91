package replay

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
)

// extractValue turns the text an extract step read into its output value,
// in this order:
//
//  1. A regex target name narrows the text to the name pattern's first
//     match (a cell named "Balance: \$[0-9.,]+" reads only the amount),
//     unless the transform is regex or strip_prefix, which picks the value
//     out of the whole text (narrowsByName).
//  2. When the output is sensitive, the text is registered with reg
//     (trimmed) before any transform runs, so no sink ever shows it, not
//     even in a transform's error; the final value is registered too.
//  3. The step's transform: money (with the output's currency, see
//     [MoneyIn]), date, trim (and no transform) trim white space, regex
//     keeps its one capture group, strip_prefix drops a leading label
//     ("Name:") when the text starts with it (case and white space aside)
//     and keeps the text otherwise. After regex, strip_prefix or trim, a
//     money or date output is parsed as money or date.
//
// Errors name the output; for a sensitive output they never quote the
// text.
func extractValue(c *domain.Capability, st *domain.Step, text string, reg func(string)) (string, error) {
	if narrowsByName(st) {
		if re, err := regexp.Compile(st.Target.Name.Value); err == nil {
			if m := re.FindString(text); m != "" {
				text = m
			}
		}
	}
	var spec domain.OutputSpec
	if s := c.Output(st.Into); s != nil {
		spec = *s
	}
	if spec.Name == "" {
		spec.Name = st.Into
	}
	if spec.Sensitive && reg != nil {
		if t := strings.TrimSpace(text); t != "" {
			reg(t)
		}
	}
	val, err := applyTransform(st.Transform, spec, text)
	if err != nil {
		if spec.Sensitive {
			return "", fmt.Errorf("output %s: the sensitive value read does not fit transform %s (not shown)", spec.Name, transformName(st.Transform))
		}
		return "", fmt.Errorf("output %s: %w", spec.Name, err)
	}
	if spec.Sensitive && reg != nil && val != "" {
		reg(val)
	}
	return val, nil
}

func transformName(t domain.Transform) string {
	if t.IsZero() {
		return "trim"
	}
	return t.String()
}

// applyTransform is step 3 of extractValue.
func applyTransform(t domain.Transform, spec domain.OutputSpec, text string) (string, error) {
	switch t.Kind() {
	case domain.TransformNameMoney:
		return MoneyIn(text, spec.Currency)
	case domain.TransformNameDate:
		return Date(text)
	case "", domain.TransformNameTrim:
		v := strings.TrimSpace(text)
		if t.IsZero() {
			return v, nil
		}
		return typed(spec, v)
	case "regex":
		re, err := regexp.Compile(t.Regex)
		if err != nil {
			return "", fmt.Errorf("transform regex: %v", err)
		}
		if re.NumSubexp() != 1 {
			return "", fmt.Errorf("transform regex %s needs exactly one capture group", t.Regex)
		}
		m := re.FindStringSubmatch(text)
		if m == nil {
			return "", fmt.Errorf("%q does not match transform regex %s", text, t.Regex)
		}
		return typed(spec, strings.TrimSpace(m[1]))
	case "strip_prefix":
		return typed(spec, StripPrefix(text, t.StripPrefix))
	}
	return "", fmt.Errorf("unknown transform %s", t)
}

// typed parses a value cut out of its label as the output's type: money
// and date outputs get their canonical form, others are returned as is.
func typed(spec domain.OutputSpec, v string) (string, error) {
	switch spec.Type {
	case domain.TypeMoney:
		return MoneyIn(v, spec.Currency)
	case domain.TypeDate:
		return Date(v)
	}
	return v, nil
}

// StripPrefix trims s and, when it starts with prefix (compared without
// regard to case or runs of white space), drops the prefix and the
// separators after it (white space, ':', '-', '–', '—'). Text that does
// not start with prefix is returned trimmed: the same step reads "Name:
// Jane Roe" and a "Jane Roe" already split from its label alike.
func StripPrefix(s, prefix string) string {
	s = strings.TrimSpace(s)
	p := strings.Fields(strings.ToLower(prefix))
	if len(p) == 0 {
		return s
	}
	rest := s
	for k, word := range p {
		if k > 0 {
			t := strings.TrimLeft(rest, " \t\n\r\u00a0")
			if t == rest {
				return s
			}
			rest = t
		}
		if len(rest) < len(word) || strings.ToLower(rest[:len(word)]) != word {
			return s
		}
		rest = rest[len(word):]
	}
	last, _ := utf8.DecodeLastRuneInString(prefix)
	if next, _ := utf8.DecodeRuneInString(rest); wordRune(last) && wordRune(next) {
		return s // "Name" is not the label of "Names: …"
	}
	return strings.TrimLeft(rest, " \t\n\r\u00a0:-–—")
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
