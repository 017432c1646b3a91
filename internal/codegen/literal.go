package codegen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Str returns s as a TypeScript string literal: JSON's escaping (quotes,
// backslashes, control characters), plus U+2028 and U+2029 (line
// terminators in older JavaScript), and <, > and & as \u escapes so that
// "</script>" or "<!--" never appear in the output. A literal is always
// double-quoted; the generator writes no template literal holding data.
// Invalid UTF-8 becomes U+FFFD.
func Str(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20, r == 0x7f, r == '<', r == '>', r == '&', r == '`', r == '$',
			r == 0x2028, r == 0x2029, r == 0xfeff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// strList is a TypeScript array literal of string literals.
func strList(xs []string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = Str(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

var templateRE = regexp.MustCompile(`\{input\.([a-z][a-z0-9_]*)\}`)

// template renders text holding {input.NAME} placeholders as a TypeScript
// string expression: literals joined by + with the case's values. quote
// escapes the values for a regular expression (a regex field).
func (g *gen) template(text string, quote bool) string {
	if g.loopAs != "" {
		return g.loopTemplate(text, quote)
	}
	ms := templateRE.FindAllStringSubmatchIndex(text, -1)
	if len(ms) == 0 {
		return Str(text)
	}
	var parts []string
	at := 0
	for _, m := range ms {
		if m[0] > at {
			parts = append(parts, Str(text[at:m[0]]))
		}
		parts = append(parts, g.inputExpr(text[m[2]:m[3]], quote))
		at = m[1]
	}
	if at < len(text) {
		parts = append(parts, Str(text[at:]))
	}
	if len(parts) == 1 && ms[0][0] == 0 && ms[0][1] == len(text) {
		return parts[0]
	}
	return strings.Join(parts, " + ")
}

// inputExpr is the case's value of an input; quote escapes it for a
// regular expression.
func (g *gen) inputExpr(name string, quote bool) string {
	spec := g.root.Input(name)
	if spec == nil {
		return g.fail("input %s is not declared", name)
	}
	e := "input(c, " + Str(name) + ")"
	if spec.Sensitive {
		e = "secret(" + Str(SecretEnv(name)) + ")"
	}
	if len(spec.Transform) > 0 {
		steps, err := json.Marshal(spec.Transform)
		if err != nil {
			return g.fail("input %s: transform: %v", name, err)
		}
		e = "shape(" + e + ", " + string(steps) + ")"
	}
	if quote {
		return "reEscape(" + e + ")"
	}
	return e
}

// SecretEnv is the environment variable a secret (or a sensitive input)
// is read from when the test runs, as cua's secret store names it.
func SecretEnv(ref string) string { return "CUA_SECRET_" + strings.ToUpper(ref) }

// regexSource translates a Go (RE2) pattern into the source of a
// JavaScript RegExp without flags that matches the same strings: "." and
// \s, which JavaScript widens to more line terminators and spaces, become
// Go's classes. Flags, named groups in Go's spelling, \A, \z, \Q…\E,
// Unicode and POSIX classes, \C and \S inside a class have no such
// equivalent and are refused.
func regexSource(pattern string) (string, error) {
	if _, err := syntax.Parse(pattern, syntax.Perl); err != nil {
		return "", fmt.Errorf("pattern %q does not compile: %v", pattern, err)
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		ch := pattern[i]
		switch {
		case ch == '\\' && i+1 < len(pattern):
			next := pattern[i+1]
			i++
			switch {
			case strings.IndexByte("AzQEpPC", next) >= 0:
				return "", fmt.Errorf("pattern %q: \\%c has no JavaScript equivalent", pattern, next)
			case next == 's' && inClass:
				b.WriteString(`\t\n\f\r `)
			case next == 's':
				b.WriteString(`[\t\n\f\r ]`)
			case next == 'S' && inClass:
				return "", fmt.Errorf("pattern %q: \\S in a class has no JavaScript equivalent", pattern)
			case next == 'S':
				b.WriteString(`[^\t\n\f\r ]`)
			default:
				b.WriteByte('\\')
				b.WriteByte(next)
			}
		case inClass:
			if strings.HasPrefix(pattern[i:], "[:") {
				return "", fmt.Errorf("pattern %q: POSIX classes have no JavaScript equivalent", pattern)
			}
			if ch == ']' {
				inClass = false
			}
			b.WriteByte(ch)
		case ch == '[':
			inClass = true
			b.WriteByte(ch)
			if strings.HasPrefix(pattern[i+1:], "^") {
				i++
				b.WriteByte('^')
			}
			if strings.HasPrefix(pattern[i+1:], "]") {
				i++
				b.WriteString(`\]`)
			}
		case ch == '(' && strings.HasPrefix(pattern[i:], "(?") && !strings.HasPrefix(pattern[i:], "(?:"):
			return "", fmt.Errorf("pattern %q: flags and named groups have no JavaScript equivalent here", pattern)
		case ch == '.':
			b.WriteString(`[^\n]`)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), nil
}

// foldRegex is a JavaScript pattern (flags "iu") that matches text whose
// folded form (perception.Fold: case folded, punctuation dropped, white
// space collapsed) equals folded, or, when whole is false, contains it.
func foldRegex(folded string, whole bool) string {
	const punct = `[^\p{L}\p{N}\p{M}\s]*`
	var b strings.Builder
	if whole {
		b.WriteString(`^[^\p{L}\p{N}\p{M}]*`)
	}
	for w, word := range strings.Fields(folded) {
		if w > 0 {
			b.WriteString(`(?:` + punct + `\s+)+` + punct)
		}
		for k, r := range word {
			if k > 0 {
				b.WriteString(punct)
			}
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if whole {
		b.WriteString(`[^\p{L}\p{N}\p{M}]*$`)
	}
	return b.String()
}

// fold is perception.Fold's rule (codegen may not import perception):
// case folded, every rune but letters, numbers, marks and spaces dropped,
// white space collapsed and trimmed.
func fold(s string) string {
	var b strings.Builder
	for _, f := range strings.Fields(s) {
		var w strings.Builder
		for _, r := range f {
			switch {
			case isWordRune(r):
				w.WriteString(strings.ToLower(strings.ToUpper(string(r))))
			}
		}
		if w.Len() == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.String())
	}
	return b.String()
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}
