package domain

// ValidJSONNumber reports whether s is a JSON number literal (RFC 8259
// §6): an optional minus, an integer part without leading zeros, an
// optional fraction and an optional exponent, each with at least one
// digit. The canonical JSON of a capability and the progress encoding of
// a step's arguments both accept exactly these.
func ValidJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if i = digits(s, i+1); s[i-1] == '.' {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		if i = digits(s, i); i == d {
			return false
		}
	}
	return i == len(s)
}

// digits returns the index after the run of ASCII digits at s[i:].
func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
