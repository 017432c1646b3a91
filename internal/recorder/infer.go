package recorder

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
)

// Shapes the replay transforms accept (kept in step with internal/replay,
// which the recorder may not import): a US dollar amount with two decimals,
// optionally grouped and marked ("$1,234.56", "USD 0.00", "-$5.00"), and a
// date written MM/DD/YYYY.
var (
	moneyText = regexp.MustCompile(`^(-)?(?:\$|USD ?)?(-)?([0-9]{1,3}(?:,[0-9]{3})*|[0-9]+)\.([0-9]{2})$`)
	usDate    = regexp.MustCompile(`^([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})$`)
)

// maxShapeRuns bounds the character-class runs a generalised pattern may
// have; longer literals are free text and get no pattern.
const maxShapeRuns = 5

// maxExampleLen bounds the literal kept as an input's example.
const maxExampleLen = 200

// literalInput is the input spec inferred for a literal typed or selected
// at discovery, before it is named.
type literalInput struct {
	spec domain.InputSpec
	// canonical is what replay types for the input when it differs from the
	// literal (money is typed in its canonical form).
	canonical string
}

// inferInput types a literal: money when it looks like an amount, date when
// it is an ISO date, else a string whose pattern is generalised from the
// literal's shape. A sensitive literal gets neither pattern nor example: its
// shape would describe a secret. A selected option gets no pattern (the
// option labels are not in the trace).
func inferInput(lit string, sensitive, selected bool) literalInput {
	spec := domain.InputSpec{Type: domain.TypeString, Required: true}
	if sensitive {
		spec.Sensitive = true
		return literalInput{spec: spec}
	}
	if utf8.RuneCountInString(lit) <= maxExampleLen {
		spec.Example = lit
	}
	if selected {
		return literalInput{spec: spec}
	}
	if canon, ok := moneyValue(lit); ok {
		spec.Type = domain.TypeMoney
		spec.Example = canon
		out := literalInput{spec: spec}
		if canon != lit {
			out.canonical = canon
		}
		return out
	}
	if isISODate(lit) {
		spec.Type = domain.TypeDate
		return literalInput{spec: spec}
	}
	if p, ok := shapePattern(lit); ok {
		spec.Pattern = p
	}
	return literalInput{spec: spec}
}

// moneyValue returns the canonical amount ("1234.56") of a money-looking
// text.
func moneyValue(s string) (string, bool) {
	m := moneyText.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || (m[1] != "" && m[2] != "") {
		return "", false
	}
	whole := strings.TrimLeft(strings.ReplaceAll(m[3], ",", ""), "0")
	if whole == "" {
		whole = "0"
	}
	sign := ""
	if (m[1] != "" || m[2] != "") && !(whole == "0" && m[4] == "00") {
		sign = "-"
	}
	return sign + whole + "." + m[4], true
}

func isISODate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// isDate reports whether the replay date transform reads s: an ISO date or
// a real MM/DD/YYYY day.
func isDate(s string) bool {
	s = strings.TrimSpace(s)
	if isISODate(s) {
		return true
	}
	m := usDate.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	_, err := time.Parse("1/2/2006", m[1]+"/"+m[2]+"/"+m[3])
	return err == nil
}

// inferOutput types extracted text: money (with transform money) for an
// amount, date (with transform date) for an ISO or MM/DD/YYYY date, else
// string.
func inferOutput(text string) (domain.ValueType, domain.Transform) {
	if _, ok := moneyValue(text); ok {
		return domain.TypeMoney, domain.TransformMoney
	}
	if isDate(text) {
		return domain.TypeDate, domain.TransformDate
	}
	return domain.TypeString, domain.Transform{}
}

// shapePattern generalises a literal into an RE2 pattern run by run: ASCII
// digits → [0-9]{N}, ASCII letters → [A-Za-z]{N}, any other printable ASCII
// character kept as itself. Literals with spaces, non-ASCII or control
// characters, or more than maxShapeRuns runs are free text: no pattern.
func shapePattern(lit string) (string, bool) {
	if lit == "" {
		return "", false
	}
	var b strings.Builder
	runs := 0
	for i := 0; i < len(lit); {
		c := lit[i]
		var class func(byte) bool
		var set string
		switch {
		case isDigit(c):
			class, set = isDigit, "[0-9]"
		case isLetter(c):
			class, set = isLetter, "[A-Za-z]"
		case c > ' ' && c < 0x7f:
			class = func(d byte) bool { return d == c }
			set = regexp.QuoteMeta(string(c))
		default:
			return "", false
		}
		j := i
		for j < len(lit) && class(lit[j]) {
			j++
		}
		if runs++; runs > maxShapeRuns {
			return "", false
		}
		n := j - i
		switch {
		case n == 1:
			b.WriteString(set)
		case len(set) == 1 && n <= 3:
			b.WriteString(strings.Repeat(set, n))
		default:
			b.WriteString(set + "{" + strconv.Itoa(n) + "}")
		}
		i = j
	}
	return b.String(), true
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// textShape describes a text without revealing it: digits become 9,
// letters a (A when upper case), everything else stays. Review notes show
// extracted values this way, since they are application data.
func textShape(s string) string {
	const max = 40
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n++; n > max {
			b.WriteString("…")
			break
		}
		switch {
		case unicode.IsDigit(r):
			b.WriteByte('9')
		case unicode.IsUpper(r):
			b.WriteByte('A')
		case unicode.IsLetter(r):
			b.WriteByte('a')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// inGoal reports whether lit occurs in goal as a whole token: not preceded
// or followed by a letter or digit where lit itself starts or ends with one.
func inGoal(goal, lit string) bool { return tokenIndex(goal, lit) >= 0 }

// tokenIndex returns the byte index of the first whole-token occurrence of
// lit in s (see [inGoal]), or -1.
func tokenIndex(s, lit string) int {
	if strings.TrimSpace(lit) == "" {
		return -1
	}
	first, _ := utf8.DecodeRuneInString(lit)
	last, _ := utf8.DecodeLastRuneInString(lit)
	for from := 0; from <= len(s)-len(lit); {
		i := strings.Index(s[from:], lit)
		if i < 0 {
			return -1
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(lit):])
		okBefore := i == 0 || !isWord(first) || !isWord(before)
		okAfter := i+len(lit) == len(s) || !isWord(last) || !isWord(after)
		if okBefore && okAfter {
			return i
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		from = i + size
	}
	return -1
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// maxName bounds step, input and output names (the schema's limit).
const maxName = 64

// snake turns a label into a snake_case name: ASCII letters and digits
// kept, lower-cased, camelCase split, everything else a single separator.
// The result may be empty or start with a digit; see [ident].
func snake(s string) string {
	var b strings.Builder
	sep := false
	var prev rune
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (isLetter(byte(r)) || isDigit(byte(r))):
			if r >= 'A' && r <= 'Z' && prev >= 'a' && prev <= 'z' {
				sep = true
			}
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(unicode.ToLower(r))
		default:
			sep = true
		}
		prev = r
	}
	return b.String()
}

// ident makes a valid name (^[a-z][a-z0-9_]*$, at most max characters)
// from a label, falling back to fallback when nothing usable remains.
func ident(label, fallback string, max int) string {
	s := snake(label)
	if s == "" {
		s = fallback
	}
	if s[0] < 'a' || s[0] > 'z' {
		s = fallback + "_" + s
	}
	if len(s) > max {
		s = strings.TrimRight(s[:max], "_")
	}
	return s
}
