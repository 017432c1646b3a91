package capability

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
)

var (
	integerRE = regexp.MustCompile(`^-?[0-9]+$`)
	numberRE  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	moneyRE   = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,2})?$`)
)

// CoerceInput checks raw against the input's type and constraints and
// returns the typed value: string, int64, float64, bool, or for money and
// date the canonical string ("1234.50", "2026-11-30"). The spec's
// Transform shapes raw first (see [ShapeInput]); beyond it nothing is
// trimmed or folded: a value padded with spaces or written with non-ASCII
// digits is refused unless the spec's pattern accepts it.
func CoerceInput(spec domain.InputSpec, raw string) (any, error) {
	if !utf8.ValidString(raw) {
		return nil, fmt.Errorf("not valid UTF-8")
	}
	if spec.Type == domain.TypeArray {
		return coerceList(spec, raw)
	}
	raw, err := ShapeInput(spec, raw)
	if err != nil {
		return nil, err
	}
	n := utf8.RuneCountInString(raw)
	if spec.MinLength != nil && n < *spec.MinLength {
		return nil, fmt.Errorf("shorter than %d characters", *spec.MinLength)
	}
	if spec.MaxLength != nil && n > *spec.MaxLength {
		return nil, fmt.Errorf("longer than %d characters", *spec.MaxLength)
	}
	if spec.Pattern != "" {
		re, err := regexp.Compile(`^(?:` + spec.Pattern + `)$`)
		if err != nil {
			return nil, fmt.Errorf("pattern does not compile: %w", err)
		}
		if !re.MatchString(raw) {
			return nil, fmt.Errorf("does not match pattern %s", spec.Pattern)
		}
	}
	var v any
	switch spec.Type {
	case domain.TypeString:
		v = raw
	case domain.TypeInteger:
		if !integerRE.MatchString(raw) {
			return nil, fmt.Errorf("not an integer")
		}
		i, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer out of range")
		}
		if err := bounds(spec, float64(i)); err != nil {
			return nil, err
		}
		v = i
	case domain.TypeNumber:
		if !numberRE.MatchString(raw) {
			return nil, fmt.Errorf("not a decimal number")
		}
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fmt.Errorf("number out of range")
		}
		if err := bounds(spec, f); err != nil {
			return nil, err
		}
		v = f
	case domain.TypeBoolean:
		switch raw {
		case "true":
			v = true
		case "false":
			v = false
		default:
			return nil, fmt.Errorf("not true or false")
		}
	case domain.TypeMoney:
		if !moneyRE.MatchString(raw) {
			return nil, fmt.Errorf("not an amount (digits with up to two decimals)")
		}
		f, _ := strconv.ParseFloat(raw, 64)
		if err := bounds(spec, f); err != nil {
			return nil, err
		}
		v = canonicalMoney(raw)
	case domain.TypeDate:
		t, err := time.Parse(time.DateOnly, raw)
		if err != nil {
			return nil, fmt.Errorf("not a date (YYYY-MM-DD)")
		}
		v = t.Format(time.DateOnly)
	case domain.TypeEnum:
		if !slices.Contains(spec.Enum, raw) {
			return nil, fmt.Errorf("not one of %v", spec.Enum)
		}
		v = raw
	default:
		return nil, fmt.Errorf("unknown type %q", spec.Type)
	}
	return v, nil
}

// ShapeInput applies spec's transforms to raw, in order: trim (white
// space at both ends), upper, lower, digits_only (every character but the
// ASCII digits removed), and format, whose template's '#'s take the
// value's characters in turn (a value of another length is refused,
// naming both lengths).
func ShapeInput(spec domain.InputSpec, raw string) (string, error) {
	for _, t := range spec.Transform {
		switch t.Op {
		case domain.InputTrim:
			raw = strings.TrimSpace(raw)
		case domain.InputUpper:
			raw = strings.ToUpper(raw)
		case domain.InputLower:
			raw = strings.ToLower(raw)
		case domain.InputDigitsOnly:
			raw = strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, raw)
		case domain.InputFormat:
			out, err := formatInput(t.Format, raw)
			if err != nil {
				return "", err
			}
			raw = out
		default:
			return "", fmt.Errorf("unknown transform %q", t.Op)
		}
	}
	return raw, nil
}

// formatInput writes value into template, one character per '#'.
func formatInput(template, value string) (string, error) {
	vs := []rune(value)
	if n := strings.Count(template, "#"); n != len(vs) {
		return "", fmt.Errorf("format %q takes %d characters, the value has %d", template, n, len(vs))
	}
	var b strings.Builder
	i := 0
	for _, r := range template {
		if r == '#' {
			r, i = vs[i], i+1
		}
		b.WriteRune(r)
	}
	return b.String(), nil
}

func bounds(spec domain.InputSpec, f float64) error {
	if spec.Minimum != nil && f < *spec.Minimum {
		return fmt.Errorf("less than %v", *spec.Minimum)
	}
	if spec.Maximum != nil && f > *spec.Maximum {
		return fmt.Errorf("greater than %v", *spec.Maximum)
	}
	return nil
}

// InputError lists caller inputs that do not satisfy the capability.
type InputError struct {
	Problems []Problem
}

func (e *InputError) Error() string {
	s := "invalid input"
	for i, p := range e.Problems {
		if i == 0 {
			s += ": "
		} else {
			s += "; "
		}
		s += p.Path + ": " + p.Message
	}
	return s
}

// Unwrap lets domain.ErrorCode classify the error as INPUT_INVALID.
func (e *InputError) Unwrap() error {
	return &domain.Error{Code: domain.CodeInputInvalid, Message: "invalid input"}
}

// BindInputs validates the caller's raw inputs against c and returns the
// typed values. Unknown names, missing required inputs and values that break
// their spec are all reported at once.
func BindInputs(c *domain.Capability, raw map[string]string) (map[string]any, error) {
	var ps []Problem
	out := map[string]any{}
	for name := range raw {
		if c.Input(name) == nil {
			ps = append(ps, Problem{Path: name, Message: "unknown input"})
		}
	}
	for _, spec := range c.Inputs {
		v, ok := raw[spec.Name]
		if !ok {
			if spec.Default != nil {
				v, ok = fmt.Sprint(spec.Default), true
			} else if spec.Required {
				ps = append(ps, Problem{Path: spec.Name, Message: "required input is missing"})
				continue
			} else {
				continue
			}
		}
		typed, err := CoerceInput(spec, v)
		if err != nil {
			ps = append(ps, Problem{Path: spec.Name, Message: err.Error()})
			continue
		}
		out[spec.Name] = typed
	}
	if len(ps) > 0 {
		slices.SortFunc(ps, func(a, b Problem) int {
			if a.Path < b.Path {
				return -1
			}
			if a.Path > b.Path {
				return 1
			}
			return 0
		})
		return nil, &InputError{Problems: ps}
	}
	return out, nil
}

// canonicalMoney writes a validated amount with exactly two decimals,
// without going through a float: "0025.5" becomes "25.50", "-0" "0.00".
func canonicalMoney(raw string) string {
	neg := strings.HasPrefix(raw, "-")
	raw = strings.TrimPrefix(raw, "-")
	whole, frac, _ := strings.Cut(raw, ".")
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	frac = (frac + "00")[:2]
	if whole == "0" && frac == "00" {
		neg = false
	}
	if neg {
		return "-" + whole + "." + frac
	}
	return whole + "." + frac
}
