package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
)

func TestAPI(t *testing.T) {
	t.Parallel()
	q, err := jobs.Open(context.Background(), jobs.Config{SQLitePath: filepath.Join(t.TempDir(), "queue.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	h, err := api.New(q, "127.0.0.1:8810", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	run := `{"ref":"memberdesk.savings_balance@1.0.0","base_url":"http://127.0.0.1:8811","inputs":{"member_id":"12345"},"idempotency_key":"k1"}`
	tests := []struct {
		name, method, path, body, host, origin, token string
		status                                        int
		want                                          string
	}{
		{"submit", "POST", "/v1/runs", run, "", "", "", 201, `"state":"available"`},
		{"submit again is the same job", "POST", "/v1/runs", run, "", "", "", 200, `"duplicate":true`},
		{"get", "GET", "/v1/runs/1", "", "", "", "", 200, `"id":1`},
		{"list", "GET", "/v1/runs?state=available", "", "", "", "", 200, `"runs":[{"id":1`},
		{"cancel", "POST", "/v1/runs/1/cancel", "", "", "", "", 200, `"state":"cancelled"`},
		{"unknown run", "GET", "/v1/runs/99", "", "", "", "", 404, `"field":"id"`},
		{"bad field", "POST", "/v1/runs", `{"ref":"x","base_url":"http://a","priority":7}`, "", "", "", 400, `"field":"priority"`},
		{"unknown field", "POST", "/v1/runs", `{"ref":"x","nope":1}`, "", "", "", 400, `"field":"body"`},
		{"bad state", "GET", "/v1/runs?state=done", "", "", "", "", 400, `"field":"state"`},
		{"no token", "GET", "/v1/runs", "", "", "", "-", 401, `"field":"token"`},
		{"wrong token", "GET", "/v1/runs", "", "", "", "nope", 401, `"field":"token"`},
		{"rebinding host", "GET", "/v1/runs", "", "evil.example:8810", "", "", 421, `"field":"host"`},
		{"foreign origin", "POST", "/v1/runs", run, "", "http://evil.example", "", 403, `"field":"origin"`},
		{"same origin", "GET", "/v1/runs", "", "localhost:8810", "http://localhost:8810", "", 200, `"runs"`},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
		req.Host = "127.0.0.1:8810"
		if tt.host != "" {
			req.Host = tt.host
		}
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		switch tt.token {
		case "":
			req.Header.Set("Authorization", "Bearer s3cret")
		case "-":
		default:
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		if tt.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %s, want %d with %s", tt.name, rec.Code, rec.Body, tt.status, tt.want)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Errorf("%s: body is not JSON: %s", tt.name, rec.Body)
		}
	}
	if _, err := api.New(q, "127.0.0.1:1", ""); err == nil {
		t.Error("an API without a token is allowed")
	}
	_ = http.StatusOK
}
