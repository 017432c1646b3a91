package runner_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/runner"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/mockapp"
)

// lookalike is a sign-on page on another loopback port: a reverse proxy
// to the real MemberDesk that counts every request it gets and whether
// one carried the operator's password (what the attack was after).
type lookalike struct {
	*httptest.Server
	requests atomic.Int64
	password atomic.Bool
}

// startLookalike starts a look-alike of app on 127.0.0.1 (another port).
func startLookalike(t *testing.T, app *mockapp.Server) *lookalike {
	t.Helper()
	target, err := url.Parse(app.URL())
	if err != nil {
		t.Fatal(err)
	}
	l := &lookalike{}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		if pr.In.Header.Get("Origin") != "" {
			pr.Out.Header.Set("Origin", target.Scheme+"://"+target.Host)
		}
	}}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(signOnPassword)) {
			l.password.Store(true)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(l.Close)
	return l
}

// wantRefused checks a run refused for its base URL's origin: FAILED
// DOMAIN_NOT_ALLOWED naming the origin and --allow-origin, its record and
// refusal in its evidence.
func wantRefused(t *testing.T, rec *domain.RunRecord, origin, dataDir string) {
	t.Helper()
	if rec.Status != domain.StatusFailed || rec.FailureCode != domain.CodeDomainNotAllowed {
		t.Fatalf("run %s: %s %s %s, want FAILED DOMAIN_NOT_ALLOWED", rec.RunID, rec.Status, rec.FailureCode, rec.Message)
	}
	if !strings.Contains(rec.Message, origin) || !strings.Contains(rec.Message, "--allow-origin "+origin) {
		t.Errorf("message %q names neither the origin %s nor how to allow it", rec.Message, origin)
	}
	events, err := os.ReadFile(filepath.Join(dataDir, "runs", rec.RunID, "events.jsonl"))
	if err != nil || !strings.Contains(string(events), `"type":"run_refused"`) || !strings.Contains(string(events), "DOMAIN_NOT_ALLOWED") {
		t.Errorf("evidence of the refusal: %v\n%s", err, events)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "runs", rec.RunID, "record.json")); err != nil {
		t.Errorf("no record in the evidence: %v", err)
	}
}

// TestRunRefusesOriginNotAllowed (invariant 17): a lookup whose base URL
// is a look-alike of MemberDesk on another loopback port, on a worker that
// allows only the real app's origin, is refused before a browser opens:
// the look-alike gets no request. The same worker allowing the look-alike
// (--allow-origin) signs on through it, typing the password into it: the
// attack the check stops.
func TestRunRefusesOriginNotAllowed(t *testing.T) {
	t.Parallel()
	lib, lookup := examplesOf(t, "memberdesk.savings_balance")
	app := startApp(t)
	look := startLookalike(t, app)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	req := jobs.Request{Capability: lookup, Library: lib, Inputs: map[string]string{"member_id": "12345"}, BaseURL: look.URL + "/"}

	data := t.TempDir()
	r := runner.New(ctx, runner.Config{DataDir: data, Secrets: signOnSecrets(t), AllowOrigins: []string{app.URL()}})
	defer r.Close()
	req.RunID = "refused"
	rec, err := r.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wantRefused(t, rec, look.URL, data)
	if n := look.requests.Load(); n != 0 {
		t.Fatalf("the look-alike got %d requests from a refused run", n)
	}

	allowing := runner.New(ctx, runner.Config{DataDir: data, Secrets: signOnSecrets(t), AllowOrigins: []string{app.URL(), look.URL}})
	defer allowing.Close()
	req.RunID = "allowed"
	rec, err = allowing.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != domain.StatusSuccess || look.requests.Load() == 0 || !look.password.Load() {
		t.Fatalf("allowed look-alike: %s %s %s, %d requests, password typed into it: %v; want SUCCESS through it",
			rec.Status, rec.FailureCode, rec.Message, look.requests.Load(), look.password.Load())
	}
}

// noBrowser names a browser that does not exist: a run that opened one
// would fail to be made.
func noBrowser(t *testing.T) launch.Options {
	return launch.Options{Browser: filepath.Join(t.TempDir(), "no-chromium")}
}

// TestRunRefusesBadBaseURL: a base URL with user info (or none that
// parses) has no origin to allow; refused, nothing opened.
func TestRunRefusesBadBaseURL(t *testing.T) {
	t.Parallel()
	lib, lookup := examplesOf(t, "memberdesk.savings_balance")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	data := t.TempDir()
	r := runner.New(ctx, runner.Config{DataDir: data, Launch: noBrowser(t), AllowOrigins: []string{"http://127.0.0.1:8811"}})
	defer r.Close()
	for i, base := range []string{"http://127.0.0.1:8811@127.0.0.1:9", "http://op:pw@127.0.0.1:8811", "ftp://127.0.0.1:8811", ""} {
		rec, err := r.Run(ctx, jobs.Request{RunID: "bad" + string(rune('a'+i)), Capability: lookup, Library: lib,
			Inputs: map[string]string{"member_id": "12345"}, BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != domain.StatusFailed || rec.FailureCode != domain.CodeDomainNotAllowed {
			t.Errorf("base %q: %s %s %s, want FAILED DOMAIN_NOT_ALLOWED", base, rec.Status, rec.FailureCode, rec.Message)
		}
	}
}
