package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
)

// TestRiverUIReadOnly mounts River's own UI over a real SQLite queue:
// behind the token (bearer, or the cookie the sign-in form sets), it shows
// the queue's jobs, and every method that would change them is 405 with
// the job untouched.
func TestRiverUIReadOnly(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: filepath.Join(t.TempDir(), "queue.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	j, err := q.Submit(ctx, jobs.RunArgs{Ref: "memberdesk.savings_balance@1.2.0", BaseURL: "http://127.0.0.1:8811",
		Inputs: map[string]string{"member_id": "12345"}})
	if err != nil {
		t.Fatal(err)
	}
	ui, err := q.UI(ctx, api.RiverUIPrefix, nil)
	if err == nil {
		t.Fatal("a UI without a logger was made")
	}
	ui, err = q.UI(ctx, api.RiverUIPrefix, discard())
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(q, "127.0.0.1:8810", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	h.MountRiverUI(ui)
	do := func(method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Host = "127.0.0.1:8810"
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	bearer := map[string]string{"Authorization": "Bearer s3cret"}
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		want                     string
	}{
		{"page without a token goes to sign-in", "GET", "/river/", "", nil, 303, ""},
		{"api without a token", "POST", "/river/api/jobs/cancel", "", nil, 401, `"field":"token"`},
		{"the UI's page", "GET", "/river/", "", bearer, 200, "<html"},
		{"the UI lists the job", "GET", "/river/api/jobs?state=available", "", bearer, 200, `"kind":"cua_run"`},
		{"cancel refused", "POST", "/river/api/jobs/cancel", `{"job_ids":["1"]}`, bearer, 405, "read-only"},
		{"delete refused", "POST", "/river/api/jobs/delete", `{"job_ids":["1"]}`, bearer, 405, "read-only"},
		{"pause refused", "PUT", "/river/api/queues/default/pause", "", bearer, 405, "read-only"},
		{"sign-in form", "GET", "/signin", "", nil, 200, `name="token"`},
		{"wrong token", "POST", "/signin", "token=nope", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 401, "not a valid token"},
	}
	for _, tt := range tests {
		rec := do(tt.method, tt.path, tt.body, tt.hdr)
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %.300s, want %d with %q", tt.name, rec.Code, rec.Body, tt.status, tt.want)
		}
	}
	// The page's own script is served too (the SPA's assets under the prefix).
	page := do("GET", "/river/", "", bearer).Body.String()
	m := regexp.MustCompile(`src="(/river/[^"]+\.js)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no script under /river/ in the page:\n%.600s", page)
	}
	if rec := do("GET", m[1], "", bearer); rec.Code != 200 || rec.Body.Len() < 1000 {
		t.Errorf("script %s: %d, %d bytes", m[1], rec.Code, rec.Body.Len())
	}
	if got, err := q.Get(ctx, j.ID); err != nil || got.State != "available" {
		t.Errorf("after the refused writes the job is %+v (%v), want available", got, err)
	}

	// A browser signs in with the token and then uses the cookie.
	rec := do("POST", "/signin", url.Values{"token": {"s3cret"}}.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if rec.Code != 303 || rec.Header().Get("Location") != "/river/" {
		t.Fatalf("sign-in: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	cookie := rec.Result().Cookies()
	if len(cookie) != 1 || !cookie[0].HttpOnly || cookie[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in cookie %+v", cookie)
	}
	req := httptest.NewRequest("GET", "/river/api/jobs?state=available", nil)
	req.Host = "127.0.0.1:8810"
	req.AddCookie(cookie[0])
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"kind":"cua_run"`) {
		t.Errorf("with the cookie: %d %.300s", rec.Code, rec.Body)
	}
	req = httptest.NewRequest("GET", "/river/", nil)
	req.Host = "evil.example:8810"
	req.AddCookie(cookie[0])
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("a rebinding Host reached the UI: %d", rec.Code)
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
