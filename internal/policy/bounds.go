package policy

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/domain"
)

// InputBounds are the inputs an approval covers. A run whose inputs fall
// outside them is refused before its first dispatch, as if it had no
// approval. Every bound names an input; an input no bound names is free.
type InputBounds struct {
	// Max is an inclusive decimal ceiling per input ("amount": "500.00").
	Max map[string]string `json:"max,omitempty"`
	// Allowed lists the values an input may take.
	Allowed map[string][]string `json:"allowed,omitempty"`
	// Pattern is a regular expression the whole value must match.
	Pattern map[string]string `json:"pattern,omitempty"`
	// Exact binds the exact value of an input: a one-off approval binds
	// every input this way.
	Exact map[string]string `json:"exact,omitempty"`
}

// Empty reports whether b bounds nothing.
func (b InputBounds) Empty() bool {
	return len(b.Max) == 0 && len(b.Allowed) == 0 && len(b.Pattern) == 0 && len(b.Exact) == 0
}

// Validate checks that every ceiling is a decimal and every pattern
// compiles, naming the bound that is wrong.
func (b InputBounds) Validate() error {
	for _, name := range sortedKeys(b.Max) {
		if _, ok := decimal(b.Max[name]); !ok {
			return fmt.Errorf("bounds: max.%s: %q is not a decimal number", name, b.Max[name])
		}
	}
	for _, name := range sortedKeys(b.Pattern) {
		if _, err := regexp.Compile(b.Pattern[name]); err != nil {
			return fmt.Errorf("bounds: pattern.%s: %w", name, err)
		}
	}
	for _, name := range sortedKeys(b.Allowed) {
		if len(b.Allowed[name]) == 0 {
			return fmt.Errorf("bounds: allowed.%s: lists no value", name)
		}
	}
	return nil
}

// Check refuses inputs outside b with APPROVAL_REQUIRED, naming the input
// and the bound. The value of an input in sensitive is never quoted.
func (b InputBounds) Check(inputs map[string]any, sensitive map[string]bool) error {
	show := func(name, v string) string {
		if sensitive[name] {
			return "its value"
		}
		return fmt.Sprintf("%q", v)
	}
	refuse := func(name, format string, args ...any) error {
		return domain.Errorf(domain.CodeApprovalRequired, "input %s is outside the approval: "+format, append([]any{name}, args...)...)
	}
	for _, name := range sortedKeys(b.Exact) {
		v, ok := value(inputs, name)
		if !ok || v != b.Exact[name] {
			return refuse(name, "the approval is for one exact value and the run gives %s", show(name, v))
		}
	}
	for _, name := range sortedKeys(b.Max) {
		v, ok := value(inputs, name)
		got, isNum := decimal(v)
		limit, _ := decimal(b.Max[name])
		if !ok || !isNum || limit == nil || got.Cmp(limit) > 0 {
			return refuse(name, "%s is above the ceiling %s (or not a number)", show(name, v), b.Max[name])
		}
	}
	for _, name := range sortedKeys(b.Allowed) {
		if v, ok := value(inputs, name); !ok || !slices.Contains(b.Allowed[name], v) {
			return refuse(name, "%s is not one of the %d allowed values", show(name, v), len(b.Allowed[name]))
		}
	}
	for _, name := range sortedKeys(b.Pattern) {
		re, err := regexp.Compile("^(?:" + b.Pattern[name] + ")$")
		v, ok := value(inputs, name)
		if err != nil || !ok || !re.MatchString(v) {
			return refuse(name, "%s does not match the approved pattern", show(name, v))
		}
	}
	return nil
}

// CheckExpiry refuses an approval whose expiry (RFC 3339, empty for none)
// is not after now.
func CheckExpiry(expires string, now time.Time) error {
	if expires == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, expires)
	if err != nil {
		return domain.Errorf(domain.CodeApprovalRequired, "approval expiry %q is not an RFC 3339 time", expires)
	}
	if !now.Before(t) {
		return domain.Errorf(domain.CodeApprovalRequired, "approval expired at %s", t.UTC().Format(time.RFC3339))
	}
	return nil
}

// value is an input's value as text; money and numbers arrive as decimal
// strings or numbers.
func value(inputs map[string]any, name string) (string, bool) {
	v, ok := inputs[name]
	if !ok || v == nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return big.NewFloat(x).Text('f', -1), true
	}
	return fmt.Sprint(v), true
}

// decimal parses a plain decimal number (no exponent, no fraction bar).
func decimal(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "/eE") {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
