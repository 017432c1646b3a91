package batchcmd_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
)

// lookalike is MemberDesk's sign-on page on another loopback port: a
// reverse proxy to the real app that counts every request it gets and
// whether one carried the operator's password.
type lookalike struct {
	*httptest.Server
	requests atomic.Int64
	password atomic.Bool
}

func (w *world) lookalike(t *testing.T) *lookalike {
	t.Helper()
	target, err := url.Parse(w.app.URL())
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
	l.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		l.requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("teller-pass-1")) { // the world's CUA_SECRET_COREBANK_PASSWORD
			l.password.Store(true)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(l.Close)
	return l
}

// wantOriginRefused checks a result refused for the look-alike's origin.
func wantOriginRefused(t *testing.T, what string, r *jobs.Result, origin string) {
	t.Helper()
	if r == nil || r.Status != domain.StatusFailed || r.FailureCode != domain.CodeDomainNotAllowed ||
		!strings.Contains(r.Message, origin) || !strings.Contains(r.Message, "--allow-origin "+origin) {
		t.Errorf("%s: %+v; want FAILED DOMAIN_NOT_ALLOWED naming %s and --allow-origin", what, r, origin)
	}
}

// TestBaseURLOriginNotAllowed (invariant 17) drives the real binary: the
// caller of `cua submit` (to `cua worker`) and of `cua batch --base-url`
// points the lookup (whose sign-on prerequisite types the worker's operator
// id and password) at a look-alike page on another loopback port; workers
// that allow only the real app's origin refuse it, FAILED
// DOMAIN_NOT_ALLOWED in one attempt, and the look-alike gets no request.
// `cua serve --allow-origin` refuses it at submit (400, base_url). The
// same batch allowing the look-alike (--allow-origin) reaches it and types
// the password into it: what the refusal prevents.
func TestBaseURLOriginNotAllowed(t *testing.T) {
	w := setup(t)
	look := w.lookalike(t)
	const lookup = "memberdesk.savings_balance"
	// cua submit to a cua worker.
	worker := w.command(append([]string{"worker", "--workers", "1", "--job-timeout", "120s"}, w.allow...)...)
	var logs syncBuffer
	worker.Stderr = &logs
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	out, err := w.command("submit", lookup, "-i", "member_id=12345", "--base-url", look.URL+"/login", "--json", "--wait").Output()
	_ = worker.Process.Signal(syscall.SIGTERM)
	_ = worker.Wait()
	var j jobs.Job
	if jerr := json.Unmarshal(out, &j); jerr != nil {
		t.Fatalf("submit --wait: %v %v\n%s\nworker:\n%s", err, jerr, out, logs.String())
	}
	wantOriginRefused(t, "cua submit", j.Result, look.URL)
	if j.State != "completed" || j.Attempt != 1 {
		t.Errorf("cua submit: job %s after %d attempts, want completed after 1 (not retried)", j.State, j.Attempt)
	}

	// cua batch --base-url, its sessions in process. The batch's own
	// results file has no message; its log names the origin.
	batch := func(member string, allow ...string) (jobs.RowResult, string, error) {
		dir := t.TempDir()
		rows, results := filepath.Join(dir, "rows.csv"), filepath.Join(dir, "results.jsonl")
		if err := os.WriteFile(rows, []byte("member_id\n"+member+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"batch", lookup, "--inputs", rows, "--out", results, "--sessions", "1", "--base-url", look.URL}, allow...)
		out, err := w.command(args...).CombinedOutput()
		var r jobs.RowResult
		if got := lines(t, results); len(got) != 1 || json.Unmarshal([]byte(got[0]), &r) != nil {
			t.Fatalf("batch: %v\n%s\nresults: %q", err, out, got)
		}
		return r, string(out), err
	}
	r, printed, err := batch("12345", w.allow...)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("batch: %v, want exit 1", err)
	}
	if r.Status != domain.StatusFailed || r.FailureCode != domain.CodeDomainNotAllowed || !strings.Contains(printed, "--allow-origin "+look.URL) {
		t.Errorf("cua batch: %+v\n%s\nwant FAILED DOMAIN_NOT_ALLOWED, the log naming --allow-origin %s", r, printed, look.URL)
	}

	// cua serve with --allow-origin refuses it before it is queued.
	status, body := w.serveSubmit(t, `{"ref":"`+lookup+`","base_url":"`+look.URL+`","inputs":{"member_id":"12345"}}`, w.allow...)
	if status != 400 || !strings.Contains(body, `"field":"base_url"`) || !strings.Contains(body, "--allow-origin "+look.URL) {
		t.Errorf("cua serve: %d %s, want 400 naming base_url and --allow-origin", status, body)
	}
	if n := look.requests.Load(); n != 0 {
		t.Fatalf("the look-alike got %d requests from refused runs", n)
	}

	// Allowed by the process that holds the secrets, it is reached.
	// (Another member: a row's idempotency key binds its inputs and base URL.)
	r, _, err = batch("56789", append(w.allow, "--allow-origin", look.URL)...)
	if err != nil || r.Status != domain.StatusSuccess || look.requests.Load() == 0 || !look.password.Load() {
		t.Fatalf("batch allowing the look-alike: %v %+v, %d requests, password typed into it: %v; want SUCCESS through it",
			err, r, look.requests.Load(), look.password.Load())
	}
}
