package domain

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Input transforms, written as a plain string in a capability; a format
// is written {format: TEMPLATE}.
const (
	InputTrim       = "trim"
	InputUpper      = "upper"
	InputLower      = "lower"
	InputDigitsOnly = "digits_only"
	InputFormat     = "format"
)

// InputTransform is one step of an input's Transform. Format is set for
// InputFormat only: each '#' in it takes the next character of the
// value, every other character is written as it is ("###-##-####").
type InputTransform struct {
	Op     string
	Format string
}

// MarshalJSON writes the string form, or {"format": TEMPLATE}.
func (t InputTransform) MarshalJSON() ([]byte, error) {
	if t.Op == InputFormat {
		return json.Marshal(map[string]string{"format": t.Format})
	}
	return json.Marshal(t.Op)
}

// UnmarshalJSON reads the string form or {"format": TEMPLATE}.
func (t *InputTransform) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		var f struct {
			Format *string `json:"format"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return err
		}
		if f.Format == nil {
			return errors.New("an input transform object holds format")
		}
		*t = InputTransform{Op: InputFormat, Format: *f.Format}
		return nil
	}
	var op string
	if err := json.Unmarshal(b, &op); err != nil {
		return err
	}
	*t = InputTransform{Op: op}
	return nil
}
