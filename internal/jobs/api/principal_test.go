package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
)

// directory adapts the principal directory to the API's authenticator,
// as `cua serve` does.
type directory struct{ d *principal.Directory }

func (a directory) Authenticate(ctx context.Context, tok string) (string, error) {
	p, err := a.d.Authenticate(ctx, tok)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// principals is a real SQLite store with the principals alice (operator),
// bob (disabled) and carol (locked after five wrong secrets), their
// tokens, and a queue over the same store.
type principals struct {
	st                store.Store
	q                 *jobs.Queue
	dir               *principal.Directory
	alice, bob, carol string
}

func newPrincipals(t *testing.T) *principals {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	_, st, err := launch.Catalog(ctx, launch.StoreOptions{DataDir: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: dir + "/queue.db", Keys: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	p := &principals{st: st, q: q, dir: principal.NewDirectory(st, nil)}
	root := principal.Principal{Name: "root@test"}
	add := func(name string, role principal.Role) string {
		tok, err := p.dir.Add(ctx, root, name, role)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	p.alice, p.bob, p.carol = add("alice", principal.Operator), add("bob", principal.Approver), add("carol", principal.Operator)
	if err := p.dir.Disable(ctx, root, "bob"); err != nil {
		t.Fatal(err)
	}
	flip := "0"
	if strings.HasSuffix(p.carol, "0") {
		flip = "1"
	}
	wrong := p.carol[:len(p.carol)-1] + flip // carol's name, a wrong secret
	for range principal.MaxFailures {
		if _, err := p.dir.Authenticate(ctx, wrong); err == nil {
			t.Fatal("a wrong secret for carol authenticated")
		}
	}
	return p
}

// TestPrincipalTokens serves the API over real HTTP on 127.0.0.1 with a
// real principal directory: no token, garbage, an unknown name, a disabled
// and a locked principal all get the same 401 with WWW-Authenticate;
// alice's token reads and submits (the run records alice, whatever the
// body says) and resolves an intervention as alice; the serve token is the
// service principal serve-token.
func TestPrincipalTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPrincipals(t)
	srv := httptest.NewUnstartedServer(nil)
	h, err := api.New(p.q, srv.Listener.Addr().String(), "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	h.Principals(directory{p.dir})
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	do := func(method, path, token, body string) (int, http.Header, string) {
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	const refusal = `{"error":"a valid bearer token is required","field":"token"}`
	for name, tok := range map[string]string{"no token": "", "garbage": "nope", "unknown name": "cuap_dave_" + strings.Repeat("ab", 32),
		"disabled bob": p.bob, "locked carol": p.carol, "serve token with a suffix": "s3cret2"} {
		code, hdr, body := do("GET", "/v1/runs", tok, "")
		if code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") || strings.TrimSpace(body) != refusal {
			t.Errorf("%s: %d %q %s, want 401 with WWW-Authenticate Bearer and %s", name, code, hdr.Get("WWW-Authenticate"), body, refusal)
		}
	}
	if code, _, body := do("GET", "/v1/runs", p.alice, ""); code != http.StatusOK || !strings.Contains(body, `"runs"`) {
		t.Fatalf("alice lists: %d %s", code, body)
	}
	run := `{"ref":"memberdesk.savings_balance@1.2.0","base_url":"http://127.0.0.1:8811","inputs":{"member_id":"12345"},"submitted_by":"mallory"}`
	for tok, want := range map[string]string{p.alice: "alice", "s3cret": api.ServeToken} {
		code, _, body := do("POST", "/v1/runs", tok, run)
		var j jobs.Job
		if err := json.Unmarshal([]byte(body), &j); code != http.StatusCreated || err != nil || j.Args.SubmittedBy != want {
			t.Errorf("submit as %s: %d %s (%v), want 201 recording %s", want, code, body, err, want)
		}
	}

	if _, err := p.st.EnqueueIntervention(ctx, store.Intervention{ID: "iv-1", SessionID: "s-1", Reason: "the transfer may have landed"}); err != nil {
		t.Fatal(err)
	}
	code, _, body := do("POST", "/v1/interventions/iv-1/resolve", p.alice, `{"verdict":"not_landed","note":"no ledger entry"}`)
	if code != http.StatusOK || !strings.Contains(body, `"resolved_by":"alice"`) {
		t.Fatalf("alice resolves: %d %s", code, body)
	}
	ivs, err := p.st.ListInterventions(ctx, store.InterventionFilter{})
	if err != nil || len(ivs) != 1 || ivs[0].ResolvedBy != "alice" {
		t.Fatalf("stored intervention: %+v %v, want resolved by alice", ivs, err)
	}
}

// TestSignInWithPrincipal: River UI's sign-in form takes a principal's
// token (the cookie then opens the UI) and refuses a disabled one.
func TestSignInWithPrincipal(t *testing.T) {
	t.Parallel()
	p := newPrincipals(t)
	ui, err := p.q.UI(t.Context(), api.RiverUIPrefix, discard())
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(p.q, "127.0.0.1:8810", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	h.Principals(directory{p.dir})
	h.MountRiverUI(ui)
	signin := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/signin", strings.NewReader("token="+tok))
		req.Host = "127.0.0.1:8810"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := signin(p.bob); rec.Code != http.StatusUnauthorized || len(rec.Result().Cookies()) != 0 {
		t.Errorf("disabled bob signs in: %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
	rec := signin(p.alice)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 || cookies[0].Secure {
		t.Fatalf("alice signs in: %d, cookies %+v (not Secure over plain HTTP)", rec.Code, cookies)
	}
	req := httptest.NewRequest("GET", "/river/api/jobs?state=available", nil)
	req.Host = "127.0.0.1:8810"
	req.AddCookie(cookies[0])
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("alice's cookie: %d %.200s", rec.Code, rec.Body)
	}
}

// TestTLSHosts: behind TLS the API answers the certificate's names with
// the listener's port, takes only https origins, and its sign-in cookie
// is Secure.
func TestTLSHosts(t *testing.T) {
	t.Parallel()
	q, h := newAPI(t, t.TempDir(), jobs.Config{})
	ui, err := q.UI(t.Context(), api.RiverUIPrefix, discard())
	if err != nil {
		t.Fatal(err)
	}
	h.MountRiverUI(ui)
	h.TLS([]string{"cua.example", "10.0.0.5", "::1"})
	tests := []struct {
		host, origin string
		status       int
	}{
		{"cua.example:8810", "", 200},
		{"10.0.0.5:8810", "https://10.0.0.5:8810", 200},
		{"[::1]:8810", "", 200},
		{"127.0.0.1:8810", "https://127.0.0.1:8810", 200},
		{"cua.example:8810", "http://cua.example:8810", 403},
		{"cua.example:9999", "", 421},
		{"evil.example:8810", "", 421},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", "/v1/runs", nil)
		req.Host = tt.host
		req.Header.Set("Authorization", "Bearer s3cret")
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("Host %s Origin %q: %d %s, want %d", tt.host, tt.origin, rec.Code, rec.Body, tt.status)
		}
	}
	req := httptest.NewRequest("POST", "/signin", strings.NewReader("token=s3cret"))
	req.Host = "cua.example:8810"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if c := rec.Result().Cookies(); rec.Code != http.StatusSeeOther || len(c) != 1 || !c[0].Secure {
		t.Errorf("sign-in over TLS: %d, cookies %+v, want one Secure cookie", rec.Code, c)
	}
}
