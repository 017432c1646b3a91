package model

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxMessage bounds a provider message quoted in an error.
const maxMessage = 300

// HTTPFailure is the port's error for a provider that answered status
// (400 or more) after retries: 408, 409, 429 and 5xx wrap ErrUnavailable;
// 401 and 403 say the key was refused; others quote the status. detail is
// the provider's message, already clipped, or "".
func HTTPFailure(provider string, status, retries int, detail string) error {
	if detail != "" {
		detail = ": " + detail
	}
	switch {
	case status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500:
		return fmt.Errorf("%s: %w: HTTP %d after %d retries%s", provider, ErrUnavailable, status, retries, detail)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%s: HTTP %d: the endpoint refused the API key%s", provider, status, detail)
	}
	return fmt.Errorf("%s: HTTP %d%s", provider, status, detail)
}

// ErrorBodyMessage returns the message of a provider's error response:
// the body's "error.message", "error" or "message", else its text, clipped.
// It returns "" for a missing or non-error response.
func ErrorBodyMessage(resp *http.Response) string {
	if resp == nil || resp.Body == nil || resp.StatusCode < 400 {
		return ""
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
			return Clip(nested.Message)
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			return Clip(s)
		case body.Message != "":
			return Clip(body.Message)
		}
	}
	return Clip(string(raw))
}

// Clip collapses whitespace and cuts s to a bounded, UTF-8-safe length.
func Clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
