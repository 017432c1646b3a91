package redact

import (
	"strings"
	"unicode"
)

// MaskShape masks a value by shape, so a reviewer sees its form but not its
// content: every digit becomes '#', every letter 'x', and everything else
// (punctuation, currency signs, blanks) stays. "$1,234.56" becomes
// "$#,###.##" and "Jane Doe" becomes "xxxx xxx". The length is kept, so do
// not use it for credentials; see MaskSensitive.
func MaskShape(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsDigit(r):
			return '#'
		case unicode.IsLetter(r):
			return 'x'
		}
		return r
	}, s)
}

// MaskSensitive masks the value of a field declared sensitive (an input or
// output with sensitive: true, a sensitive node). A field named like a
// credential (IsSensitiveKey: password, pin, api_key, …) reveals nothing, not
// even its length, and becomes Marker; any other keeps its shape
// (MaskShape), so "date_of_birth" shows "####-##-##". An empty value stays
// empty.
func MaskSensitive(name, value string) string {
	if value == "" {
		return ""
	}
	if IsSensitiveKey(name) {
		return Marker
	}
	return MaskShape(value)
}
