package capability

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
)

// CanonicalJSON returns the RFC 8785 (JSON Canonicalization Scheme) form of
// the JSON text data: object members sorted by the UTF-16 code units of
// their names, numbers written as ECMAScript's Number.prototype.toString
// writes them, strings escaped as JSON.stringify escapes them, no
// whitespace. It runs in O(n log n) of the input size (each object's keys
// are sorted once; nesting is bounded) and checks ctx as it goes, returning
// ctx.Err() once ctx is done. Invalid JSON, duplicate member names and
// numbers outside float64 are errors.
func CanonicalJSON(ctx context.Context, data []byte) ([]byte, error) {
	c := canonicalizer{ctx: ctx, in: data}
	c.out = make([]byte, 0, len(data))
	c.skipSpace()
	if err := c.value(0); err != nil {
		return nil, err
	}
	c.skipSpace()
	if c.pos != len(c.in) {
		return nil, c.errorf("trailing data after the top-level value")
	}
	return c.out, nil
}

// maxCanonicalDepth bounds nesting (each level may copy its bytes once).
const maxCanonicalDepth = 512

type canonicalizer struct {
	ctx   context.Context
	in    []byte
	pos   int
	out   []byte
	count int
	keys  []byte // unescaped member names that had escapes
}

// name returns m's member name (aliasing the input or c.keys).
func (c *canonicalizer) name(m member) []byte {
	if m.escaped {
		return c.keys[m.kStart:m.kEnd]
	}
	return c.in[m.kStart:m.kEnd]
}

// member is one object member, pointer-free so that a 200,000-member
// object costs the garbage collector nothing: its name is bytes
// [kStart, kEnd) of the input or, for a name with escapes, of keys.
type member struct {
	escaped      bool
	kStart, kEnd int
	start, end   int // the value's bytes, relative to the object's start
}

func (c *canonicalizer) errorf(format string, args ...any) error {
	return fmt.Errorf("canonical json: offset %d: %s", c.pos, fmt.Sprintf(format, args...))
}

func (c *canonicalizer) skipSpace() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonicalizer) value(depth int) error {
	c.count++
	if c.count&0x3ff == 0 {
		if err := c.ctx.Err(); err != nil {
			return err
		}
	}
	if depth > maxCanonicalDepth {
		return c.errorf("nesting deeper than %d", maxCanonicalDepth)
	}
	if c.pos >= len(c.in) {
		return c.errorf("unexpected end of input")
	}
	switch b := c.in[c.pos]; {
	case b == '{':
		return c.object(depth)
	case b == '[':
		return c.array(depth)
	case b == '"':
		s, _, err := c.str()
		if err != nil {
			return err
		}
		c.out = appendCanonicalString(c.out, s)
		return nil
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(c.in[c.pos:], []byte(lit)) {
				c.pos += len(lit)
				c.out = append(c.out, lit...)
				return nil
			}
		}
		return c.errorf("unexpected character %q", b)
	}
}

func (c *canonicalizer) array(depth int) error {
	c.pos++ // '['
	c.out = append(c.out, '[')
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		return nil
	}
	for {
		c.skipSpace()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.skipSpace()
		if c.pos >= len(c.in) {
			return c.errorf("unterminated array")
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			return nil
		default:
			return c.errorf("want , or ] in an array")
		}
	}
}

func (c *canonicalizer) object(depth int) error {
	c.pos++ // '{'
	base := len(c.out)
	c.out = append(c.out, '{')
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		return nil
	}
	// Members are written in input order as they are read. Input that is
	// already in canonical order (encoding/json writes maps sorted, and
	// large objects are maps) is then done; otherwise the members are
	// sorted and rewritten once.
	var members []member
	inOrder := true
	for {
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return c.errorf("want a string member name")
		}
		key, fromInput, err := c.str()
		if err != nil {
			return err
		}
		m := member{kStart: c.pos - 1 - len(key), kEnd: c.pos - 1}
		if !fromInput {
			m = member{escaped: true, kStart: len(c.keys)}
			c.keys = append(c.keys, key...)
			m.kEnd = len(c.keys)
		}
		if n := len(members); n > 0 {
			switch compareUTF16(c.name(members[n-1]), key) {
			case 0:
				return c.errorf("duplicate member name %q", key)
			case 1:
				inOrder = false
			}
		}
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return c.errorf("want : after a member name")
		}
		c.pos++
		c.skipSpace()
		if len(members) > 0 {
			c.out = append(c.out, ',')
		}
		c.out = appendCanonicalString(c.out, key)
		c.out = append(c.out, ':')
		start := len(c.out)
		if err := c.value(depth + 1); err != nil {
			return err
		}
		m.start, m.end = start-base, len(c.out)-base
		members = append(members, m)
		c.skipSpace()
		if c.pos >= len(c.in) {
			return c.errorf("unterminated object")
		}
		if c.in[c.pos] == ',' {
			c.pos++
			continue
		}
		if c.in[c.pos] == '}' {
			c.pos++
			break
		}
		return c.errorf("want , or } in an object")
	}
	if !inOrder {
		if err := c.reorder(base, members); err != nil {
			return err
		}
	}
	c.out = append(c.out, '}')
	return nil
}

// reorder rewrites the members written since base (without the closing
// brace) in canonical key order.
func (c *canonicalizer) reorder(base int, members []member) error {
	slices.SortFunc(members, func(a, b member) int { return compareUTF16(c.name(a), c.name(b)) })
	for i := 1; i < len(members); i++ {
		if bytes.Equal(c.name(members[i-1]), c.name(members[i])) {
			return c.errorf("duplicate member name %q", c.name(members[i]))
		}
	}
	scratch := slices.Clone(c.out[base:])
	c.out = append(c.out[:base], '{')
	for i, m := range members {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = appendCanonicalString(c.out, c.name(m))
		c.out = append(c.out, ':')
		c.out = append(c.out, scratch[m.start:m.end]...)
	}
	return nil
}

// compareUTF16 compares the valid UTF-8 strings a and b by their UTF-16
// code units, as RFC 8785 §3.2.3 sorts member names, without converting
// them. UTF-8 byte order is code point order, which differs from UTF-16
// order only between U+E000..U+FFFF and the supplementary planes (written
// as surrogates U+D800..U+DFFF, so they sort first); that is decided on the
// first rune that differs.
func compareUTF16[T string | []byte](a, b T) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmp.Compare(len(a), len(b))
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return cmp.Compare(a[i], b[i])
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(string(a[i:]))
	rb, _ := utf8.DecodeRuneInString(string(b[i:]))
	if c := cmp.Compare(firstUnit(ra), firstUnit(rb)); c != 0 {
		return c
	}
	return cmp.Compare(ra, rb)
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

// str reads the JSON string at c.pos and returns its value; fromInput
// says that the value is the input's bytes just before the closing quote
// (the string had no escapes), which the caller must not modify.
func (c *canonicalizer) str() (s []byte, fromInput bool, err error) {
	c.pos++ // '"'
	start := c.pos
	// Fast path: no escapes.
	for c.pos < len(c.in) {
		b := c.in[c.pos]
		if b == '"' {
			s := c.in[start:c.pos]
			c.pos++
			if !utf8.Valid(s) {
				return nil, false, c.errorf("string is not valid UTF-8")
			}
			return s, true, nil
		}
		if b == '\\' {
			break
		}
		if b < 0x20 {
			return nil, false, c.errorf("control character in a string")
		}
		c.pos++
	}
	sb := bytes.NewBuffer(slices.Clone(c.in[start:c.pos]))
	for c.pos < len(c.in) {
		b := c.in[c.pos]
		switch {
		case b == '"':
			c.pos++
			s := sb.Bytes()
			if !utf8.Valid(s) {
				return nil, false, c.errorf("string is not valid UTF-8")
			}
			return s, false, nil
		case b < 0x20:
			return nil, false, c.errorf("control character in a string")
		case b != '\\':
			sb.WriteByte(b)
			c.pos++
			continue
		}
		if c.pos+1 >= len(c.in) {
			break
		}
		esc := c.in[c.pos+1]
		c.pos += 2
		switch esc {
		case '"', '\\', '/':
			sb.WriteByte(esc)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, ok := c.hex4()
			if !ok {
				return nil, false, c.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if c.pos+1 < len(c.in) && c.in[c.pos] == '\\' && c.in[c.pos+1] == 'u' {
					save := c.pos
					c.pos += 2
					if v, ok := c.hex4(); ok {
						r2 = v
					} else {
						c.pos = save
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
				} else {
					return nil, false, c.errorf("lone UTF-16 surrogate in a string")
				}
			}
			sb.WriteRune(r)
		default:
			return nil, false, c.errorf("bad escape \\%c", esc)
		}
	}
	return nil, false, c.errorf("unterminated string")
}

func (c *canonicalizer) hex4() (rune, bool) {
	if c.pos+4 > len(c.in) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(c.in[c.pos:c.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	c.pos += 4
	return rune(v), true
}

func (c *canonicalizer) number() error {
	start := c.pos
	for c.pos < len(c.in) {
		switch b := c.in[c.pos]; {
		case b >= '0' && b <= '9', b == '-', b == '+', b == '.', b == 'e', b == 'E':
			c.pos++
			continue
		}
		break
	}
	text := string(c.in[start:c.pos])
	if !domain.ValidJSONNumber(text) {
		return c.errorf("bad number %q", text)
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return c.errorf("number %s: %v", text, err)
	}
	s, err := CanonicalNumber(f)
	if err != nil {
		return err
	}
	c.out = append(c.out, s...)
	return nil
}

// appendCanonicalString appends s as RFC 8785 §3.2.2.2 wants: '"' and '\\'
// escaped, \b \t \n \f \r for those controls, \u00xx (lower-case hex) for
// the other controls below U+0020, everything else as its UTF-8 bytes.
func appendCanonicalString[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"':
			b = append(b, '\\', '"')
		case ch == '\\':
			b = append(b, '\\', '\\')
		case ch == '\b':
			b = append(b, '\\', 'b')
		case ch == '\t':
			b = append(b, '\\', 't')
		case ch == '\n':
			b = append(b, '\\', 'n')
		case ch == '\f':
			b = append(b, '\\', 'f')
		case ch == '\r':
			b = append(b, '\\', 'r')
		case ch < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&0xf])
		default:
			b = append(b, ch)
		}
	}
	return append(b, '"')
}

// CanonicalNumber writes f as ECMAScript's Number.prototype.toString does
// (RFC 8785 §3.2.2.3): the shortest round-tripping digits, plain notation
// for 1e-6 <= |f| < 1e21, otherwise exponent notation with no leading zero
// in the exponent; -0 is "0". NaN and infinities are errors.
func CanonicalNumber(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("canonical json: %v is not a JSON number", f)
	}
	if f == 0 {
		return "0", nil
	}
	sign := ""
	if f < 0 {
		f, sign = -f, "-"
	}
	format := byte('e')
	if f < 1e21 && f >= 1e-6 {
		format = 'f'
	}
	s := strconv.FormatFloat(f, format, -1, 64)
	if e := strings.IndexByte(s, 'e'); e > 0 && e+2 < len(s) && s[e+2] == '0' {
		// Go writes e+09 and e-07; ECMAScript writes e+9 and e-7.
		s = s[:e+2] + s[e+3:]
	}
	return sign + s, nil
}
