package redact

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// ErrInvalidJSON is returned by [Redactor.JSON] for input that is not valid
// JSON.
var ErrInvalidJSON = errors.New("redact: invalid JSON")

// maxDepth bounds how deep Value and the slog handler descend; anything
// deeper is replaced by Marker.
const maxDepth = 64

// sensitiveKeySuffixes end the normalized names of credential keys.
var sensitiveKeySuffixes = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"privatekey", "accesskey", "authorization", "cookie", "credential",
	"credentials",
}

// sensitiveKeyNames are credential keys too short to match as suffixes.
var sensitiveKeyNames = []string{"pwd", "pin", "cvv", "cvc", "otp"}

// IsSensitiveKey reports whether a key (a JSON object key, map key or slog
// attribute key) names a credential whose value must never be written: after
// dropping case, '_', '-', '.' and blanks it ends in password, passwd,
// passphrase, secret, token, apikey, privatekey, accesskey, authorization,
// cookie, credential or credentials, or is pwd, pin, cvv, cvc or otp.
//
// Keys starting with '$' are references, not values ("$secret" names a
// secret), and are never sensitive. Neither are "key" (a key to press),
// "tokens" (a count) or "token_type".
func IsSensitiveKey(name string) bool {
	if strings.HasPrefix(name, "$") {
		return false
	}
	n := normalizeKey(name)
	for _, x := range sensitiveKeyNames {
		if n == x {
			return true
		}
	}
	for _, x := range sensitiveKeySuffixes {
		if strings.HasSuffix(n, x) {
			return true
		}
	}
	return false
}

// sensitiveKey adds the keys of WithSensitiveKeys to IsSensitiveKey.
func (r *Redactor) sensitiveKey(name string) bool {
	if IsSensitiveKey(name) {
		return true
	}
	if len(r.sensitiveKeys) == 0 || strings.HasPrefix(name, "$") {
		return false
	}
	n := normalizeKey(name)
	for _, x := range r.sensitiveKeys {
		if n == x {
			return true
		}
	}
	return false
}

// Value returns a redacted copy of v. Strings are redacted as by String;
// numbers whose decimal form holds a literal or a pattern (a card number
// stored as an integer) become redacted strings; map values under sensitive
// keys (see IsSensitiveKey) become Marker unless they are nil, empty strings
// or booleans.
//
// map[string]any, []any, map[string]string and []string keep their types.
// Errors become their redacted message and fmt.Stringers that are not JSON
// or text marshalers, and not structs, maps, slices or pointers, their
// redacted String() when that needs redacting. Structs, pointers, other maps
// and slices are converted to their JSON form (map[string]any, []any,
// json.Number, …) and redacted as such. Values that cannot be inspected
// (channels, functions, cyclic data, nesting deeper than 64) become Marker:
// Value fails closed, and so does a String, Error or MarshalJSON method
// that panics. Named string and number types come back unchanged when
// nothing was redacted. []byte is redacted as by Bytes and may be returned
// as is.
func (r *Redactor) Value(v any) any { return r.value(v, 0) }

func (r *Redactor) value(v any, depth int) any {
	if depth > maxDepth {
		return Marker
	}
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return r.String(x)
	case []byte:
		return r.Bytes(x)
	case bool:
		return x
	case int:
		return r.number(v, strconv.FormatInt(int64(x), 10))
	case int64:
		return r.number(v, strconv.FormatInt(x, 10))
	case uint64:
		return r.number(v, strconv.FormatUint(x, 10))
	case float64:
		return r.number(v, strconv.FormatFloat(x, 'f', -1, 64))
	case json.Number:
		return r.number(v, x.String())
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if r.sensitiveKey(k) && !harmless(e) {
				out[r.String(k)] = Marker
				continue
			}
			out[r.String(k)] = r.value(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.value(e, depth+1)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, e := range x {
			if r.sensitiveKey(k) && e != "" {
				out[r.String(k)] = Marker
				continue
			}
			out[r.String(k)] = r.String(e)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = r.String(e)
		}
		return out
	case error:
		return r.text(x.Error)
	case json.Marshaler, encoding.TextMarshaler:
		return r.viaJSON(v, depth)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array, reflect.Pointer, reflect.Interface:
		return r.viaJSON(v, depth)
	}
	if x, ok := v.(fmt.Stringer); ok {
		s, ok := safeText(x.String)
		if !ok {
			return Marker
		}
		if red := r.String(s); red != s {
			return red
		}
	}
	switch rv.Kind() {
	case reflect.String:
		if s := rv.String(); r.String(s) != s {
			return r.String(s)
		}
		return v
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return r.number(v, strconv.FormatInt(rv.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return r.number(v, strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		return r.number(v, strconv.FormatFloat(rv.Float(), 'f', -1, 64))
	case reflect.Bool:
		return v
	case reflect.Complex64, reflect.Complex128:
		return r.number(v, fmt.Sprint(v))
	}
	return Marker // channels, functions, unsafe pointers
}

// harmless reports whether a value under a sensitive key reveals nothing.
func harmless(v any) bool {
	switch x := v.(type) {
	case nil, bool:
		return true
	case string:
		return x == ""
	}
	return false
}

// number returns v unchanged unless its decimal text needs redacting.
func (r *Redactor) number(v any, text string) any {
	if red := r.String(text); red != text {
		return red
	}
	return v
}

// safeText returns f(), or ok false if f panics (as the String method of a
// nil pointer often does).
func safeText(f func() string) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			s, ok = "", false
		}
	}()
	return f(), true
}

// text returns the redacted result of f, or Marker if f panics.
func (r *Redactor) text(f func() string) string {
	s, ok := safeText(f)
	if !ok {
		return Marker
	}
	return r.String(s)
}

// viaJSON redacts v through its JSON form.
func (r *Redactor) viaJSON(v any, depth int) any {
	b, err := marshalSafe(v)
	if err != nil {
		return Marker
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return Marker
	}
	return r.value(out, depth+1)
}

// JSON returns a redacted copy of the JSON document b, keeping its layout,
// key order and number formatting. Every string (keys included) is redacted
// as by String; a number whose text holds a literal or pattern becomes a
// redacted string; the value of a sensitive key (see IsSensitiveKey) becomes
// "[REDACTED]" unless it is null, false, true or "" — objects and arrays
// included. It returns ErrInvalidJSON, and no output, when b is not valid
// JSON; use Bytes for text that only may be JSON.
func (r *Redactor) JSON(b []byte) ([]byte, error) {
	if !json.Valid(b) {
		return nil, ErrInvalidJSON
	}
	type frame struct{ obj, wantKey bool }
	var stack []frame
	out := make([]byte, 0, len(b)+len(b)/8)
	pending := false // the next value belongs to a sensitive key
	quotedMarker := []byte(`"` + Marker + `"`)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '{' || c == '[':
			if pending {
				pending = false
				out = append(out, quotedMarker...)
				i = skipJSONValue(b, i)
				continue
			}
			stack = append(stack, frame{obj: c == '{', wantKey: c == '{'})
			out = append(out, c)
			i++
		case c == '}' || c == ']':
			stack = stack[:len(stack)-1]
			out = append(out, c)
			i++
		case c == ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].wantKey = true
			}
			out = append(out, c)
			i++
		case c == '"':
			j := endJSONString(b, i)
			raw := b[i:j]
			i = j
			if n := len(stack); n > 0 && stack[n-1].wantKey {
				stack[n-1].wantKey = false
				key := decodeJSONString(raw)
				pending = r.sensitiveKey(key)
				out = r.appendJSONString(out, raw, key)
				continue
			}
			if pending {
				pending = false
				if len(raw) > 2 {
					out = append(out, quotedMarker...)
					continue
				}
				out = append(out, raw...)
				continue
			}
			out = r.appendJSONString(out, raw, decodeJSONString(raw))
		case c == '-' || isDigit(c):
			j := i
			for j < len(b) && strings.IndexByte("+-.eE0123456789", b[j]) >= 0 {
				j++
			}
			num := string(b[i:j])
			i = j
			if pending {
				pending = false
				out = append(out, quotedMarker...)
				continue
			}
			if red := r.String(num); red != num {
				out = appendQuoted(out, red)
				continue
			}
			out = append(out, num...)
		case c == 't' || c == 'f' || c == 'n':
			pending = false
			j := i
			for j < len(b) && isAlpha(b[j]) {
				j++
			}
			out = append(out, b[i:j]...)
			i = j
		default: // whitespace and ':'
			out = append(out, c)
			i++
		}
	}
	return out, nil
}

// endJSONString returns the index just past the string literal starting at
// b[i] (b is valid JSON).
func endJSONString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipJSONValue returns the index just past the object or array starting at
// b[i] (b is valid JSON).
func skipJSONValue(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			j = endJSONString(b, j) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(b)
}

// marshalSafe is json.Marshal that turns a panicking MarshalJSON into an
// error.
func marshalSafe(v any) (b []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, fmt.Errorf("marshal: panic: %v", p)
		}
	}()
	return json.Marshal(v)
}

func decodeJSONString(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(body)
	}
	return s
}

// appendJSONString appends the string literal raw (whose value is s),
// re-encoded only if redaction changed it.
func (r *Redactor) appendJSONString(out, raw []byte, s string) []byte {
	red := r.String(s)
	if red == s {
		return append(out, raw...)
	}
	return appendQuoted(out, red)
}

func appendQuoted(out []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return append(out, `"`+Marker+`"`...)
	}
	return append(out, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
