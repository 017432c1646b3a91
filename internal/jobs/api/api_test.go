package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
	"github.com/cuahq/cua/internal/launch"
)

// newAPI opens a queue with cfg (its SQLite file in dir) and the API over
// it, bound to 127.0.0.1:8810 with the token s3cret.
func newAPI(t *testing.T, dir string, cfg jobs.Config) (*jobs.Queue, *api.Handler) {
	t.Helper()
	cfg.SQLitePath = filepath.Join(dir, "queue.db")
	q, err := jobs.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	h, err := api.New(q, "127.0.0.1:8810", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	return q, h
}

func TestAPI(t *testing.T) {
	t.Parallel()
	q, h := newAPI(t, t.TempDir(), jobs.Config{})
	run := `{"ref":"memberdesk.savings_balance@1.2.0","base_url":"http://127.0.0.1:8811","inputs":{"member_id":"12345"},"idempotency_key":"k1"}`
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
}

// TestSubmitSensitive: with the catalog behind the queue, a sensitive
// input sent as a value is refused (400 naming the input) and nothing is
// queued; sent as a secret reference it is queued, and GET shows the
// reference, never a value.
func TestSubmitSensitive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	cat, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := cat.AddFile(ctx, "../testdata/test.sign_on_as.yaml"); err != nil {
		t.Fatal(err)
	}
	q, h := newAPI(t, dir, jobs.Config{Capabilities: cat})
	const head = `{"ref":"test.sign_on_as@1.0.0","base_url":"http://127.0.0.1:8811",`
	tests := []struct {
		name, body string
		status     int
		want       []string
	}{
		{"a sensitive value", head + `"inputs":{"operator":"OP1001"}}`, 400,
			[]string{`"field":"inputs.operator"`, "is sensitive", "input_secrets"}},
		{"a reference that is not one", head + `"input_secrets":{"operator":"OP1001"}}`, 400,
			[]string{`"field":"input_secrets.operator"`}},
		{"an unknown capability", `{"ref":"nope@1.0.0","base_url":"http://127.0.0.1:8811"}`, 400,
			[]string{`"field":"ref"`}},
		{"a reference", head + `"input_secrets":{"operator":"teller_operator"}}`, 201,
			[]string{`"input_secrets":{"operator":"teller_operator"}`}},
		{"get shows the reference", "", 200, []string{`"input_secrets":{"operator":"teller_operator"}`}},
	}
	for _, tt := range tests {
		method, path := "POST", "/v1/runs"
		if tt.body == "" {
			method, path = "GET", "/v1/runs/1"
		}
		req := httptest.NewRequest(method, path, strings.NewReader(tt.body))
		req.Host = "127.0.0.1:8810"
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != tt.status || strings.Contains(body, "OP1001") {
			t.Errorf("%s: %d %s, want %d and no value", tt.name, rec.Code, body, tt.status)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: %s does not hold %s", tt.name, body, w)
			}
		}
		if tt.status == 400 {
			if js, err := q.List(ctx, jobs.ListParams{}); err != nil || len(js) != 0 {
				t.Errorf("%s: %v, %d jobs queued by a refused submit", tt.name, err, len(js))
			}
		}
	}
}

// The published document describes every field a run takes.
func TestOpenAPIRunArgs(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../schema/jobs-api.openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Components.Schemas["RunArgs"].Properties
	typ := reflect.TypeOf(jobs.RunArgs{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if _, ok := props[name]; !ok {
			t.Errorf("RunArgs.%s (%s) is not in the OpenAPI document's RunArgs", typ.Field(i).Name, name)
		}
	}
	if len(props) != typ.NumField() {
		t.Errorf("the document's RunArgs has %d properties, the type %d fields", len(props), typ.NumField())
	}
}
