package model

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestHTTPFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status      int
		unavailable bool
		want        string
	}{
		{429, true, "x: model provider unavailable: HTTP 429 after 2 retries: slow down"},
		{503, true, "x: model provider unavailable: HTTP 503 after 2 retries: slow down"},
		{401, false, "x: HTTP 401: the endpoint refused the API key: slow down"},
		{400, false, "x: HTTP 400: slow down"},
	}
	for _, tt := range tests {
		err := HTTPFailure("x", tt.status, 2, "slow down")
		if err.Error() != tt.want || errors.Is(err, ErrUnavailable) != tt.unavailable {
			t.Errorf("HTTPFailure(%d) = %v (unavailable %v)", tt.status, err, errors.Is(err, ErrUnavailable))
		}
	}
}

func TestErrorBodyMessage(t *testing.T) {
	t.Parallel()
	resp := func(status int, body string) *http.Response {
		return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body))}
	}
	tests := []struct {
		resp *http.Response
		want string
	}{
		{resp(400, `{"error":{"message":"bad  schema"}}`), "bad schema"},
		{resp(500, `{"error":"boom"}`), "boom"},
		{resp(404, `{"message":"no such model"}`), "no such model"},
		{resp(502, "<html>gateway</html>"), "<html>gateway</html>"},
		{resp(200, `{"error":"ignored"}`), ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := ErrorBodyMessage(tt.resp); got != tt.want {
			t.Errorf("ErrorBodyMessage = %q, want %q", got, tt.want)
		}
	}
	long := strings.Repeat("é", 400)
	if c := Clip(long); len(c) > maxMessage+len("…") || !strings.HasSuffix(c, "…") {
		t.Errorf("Clip did not bound %d bytes: %d", len(long), len(c))
	}
}
