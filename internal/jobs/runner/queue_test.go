package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
	"github.com/cuahq/cua/internal/jobs/runner"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/store/pgtest"
)

// apiClient posts to and reads from a jobs API with its token.
type apiClient struct {
	t    *testing.T
	base string
}

func (c apiClient) do(method, path, body string) (int, *jobs.Job) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	j := &jobs.Job{}
	if res.StatusCode < 300 {
		if err := json.Unmarshal(b, j); err != nil {
			c.t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	} else {
		c.t.Logf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return res.StatusCode, j
}

// run submits a run and waits until its job is final.
func (c apiClient) run(ctx context.Context, ref, baseURL string) *jobs.Job {
	c.t.Helper()
	status, j := c.do("POST", "/v1/runs", fmt.Sprintf(`{"ref":%q,"base_url":%q,"inputs":{"member_id":"12345"}}`, ref, baseURL))
	if status != http.StatusCreated {
		c.t.Fatalf("submit %s at %s: %d", ref, baseURL, status)
	}
	for !j.Final() {
		if ctx.Err() != nil {
			c.t.Fatalf("job %d not final: %+v", j.ID, j)
		}
		time.Sleep(100 * time.Millisecond)
		_, j = c.do("GET", fmt.Sprint("/v1/runs/", j.ID), "")
	}
	return j
}

// TestQueueRefusesOriginNotAllowed (invariant 17) runs the queue as a
// worker does, on a real PostgreSQL, behind the jobs API: a caller holding
// only the API token submits a lookup (its sign-on prerequisite types the
// worker's operator id and password) with base_url a look-alike of
// MemberDesk on another loopback port; the worker allows only the real
// app's origin. The job ends FAILED DOMAIN_NOT_ALLOWED in one attempt,
// indexed, and the look-alike got no request. A sealed tenant overlay that
// declares the look-alike's origin is run there without --allow-origin:
// the capability's owner allowed it.
func TestQueueRefusesOriginNotAllowed(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	pg, err := pgtest.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	if _, err := pg.CreateDatabase(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	db := pg.URL("origin")
	data := t.TempDir()
	cat, st, err := launch.Catalog(ctx, launch.StoreOptions{DB: db, DataDir: data, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	files, _ := filepath.Glob(examples + "/*.yaml")
	for _, f := range files {
		if _, err := cat.AddFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	// The base's exact version: a bare id may resolve to the overlay.
	base, _, err := cat.Resolve(ctx, "memberdesk.savings_balance")
	if err != nil {
		t.Fatal(err)
	}
	app := startApp(t)
	look := startLookalike(t, app)
	ov, err := cat.AddOverlay(ctx, "memberdesk.savings_balance", catalog.Overlay{Tenant: "lookalike", BaseURL: look.URL})
	if err != nil {
		t.Fatal(err)
	}

	r := runner.New(ctx, runner.Config{DataDir: data, Secrets: signOnSecrets(t), AllowOrigins: []string{app.URL()}})
	defer r.Close()
	q, err := jobs.Open(ctx, jobs.Config{DB: db, Workers: 1, Worker: jobs.NewWorker(cat, st, signOnSecrets(t), r, nil),
		Capabilities: cat, JobTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.Stop(context.WithoutCancel(ctx)) }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(q, ln.Addr().String(), "tok")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	c := apiClient{t: t, base: "http://" + ln.Addr().String()}

	j := c.run(ctx, base.Capability.Ref(), look.URL)
	res := j.Result
	if j.State != "completed" || j.Attempt != 1 || res == nil || res.Status != domain.StatusFailed || res.FailureCode != domain.CodeDomainNotAllowed {
		t.Fatalf("job %+v result %+v; want completed after one attempt, FAILED DOMAIN_NOT_ALLOWED", j, res)
	}
	if !strings.Contains(res.Message, look.URL) || !strings.Contains(res.Message, "--allow-origin "+look.URL) {
		t.Errorf("message %q names neither the origin nor --allow-origin", res.Message)
	}
	if n := look.requests.Load(); n != 0 {
		t.Fatalf("the look-alike got %d requests from a refused job", n)
	}
	run, err := st.GetRun(ctx, res.RunID)
	if err != nil || run.Status != domain.StatusFailed || run.FailureCode != domain.CodeDomainNotAllowed {
		t.Errorf("index of run %s: %+v %v; want FAILED DOMAIN_NOT_ALLOWED", res.RunID, run, err)
	}

	overlay := ov.Version.CapabilityID + "@" + ov.Version.Version
	j = c.run(ctx, overlay, look.URL)
	if j.Result == nil || j.Result.Status != domain.StatusSuccess || look.requests.Load() == 0 {
		t.Fatalf("%s at its declared origin: job %+v result %+v, %d look-alike requests; want SUCCESS there",
			overlay, j, j.Result, look.requests.Load())
	}
}
