package modeltest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cuahq/cua/internal/model"
	"github.com/cuahq/cua/internal/model/modeltest"
)

// recordingTB keeps the failures and cleanups a fake registers, so a test
// can check them instead of failing.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// finish runs the cleanups, last first, and returns the failures.
func (r *recordingTB) finish() []string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs
}

func post(tb testing.TB, url string) int {
	tb.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		tb.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestServerScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stubs   []modeltest.Stub
		posts   int
		want    []int
		wantErr string
	}{
		{"served in order", []modeltest.Stub{modeltest.Fail(429, "slow down"), modeltest.Reply("{}", model.Usage{})}, 2, []int{429, 200}, ""},
		{"unused stub fails", []modeltest.Stub{modeltest.Reply("{}", model.Usage{}), modeltest.Fail(500, "x")}, 1, []int{200}, "stub 2 of 2 (status 500) was never used"},
		{"request beyond the script fails", []modeltest.Stub{modeltest.Reply("{}", model.Usage{})}, 2, []int{200, 418}, "got request 2 but holds 1 stubs"},
		{"always serves every request", []modeltest.Stub{modeltest.Fail(503, "down").Always()}, 3, []int{503, 503, 503}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recordingTB{TB: t}
			srv := modeltest.OpenAIServer(rec, tc.stubs...)
			var got []int
			for range tc.posts {
				got = append(got, post(t, srv.BaseURL()+"/chat/completions"))
			}
			errs := rec.finish()
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("statuses = %v, want %v", got, tc.want)
			}
			joined := strings.Join(errs, "\n")
			if tc.wantErr == "" && len(errs) > 0 || tc.wantErr != "" && !strings.Contains(joined, tc.wantErr) {
				t.Errorf("failures = %q, want %q", joined, tc.wantErr)
			}
		})
	}
}

func TestServerWrongPath(t *testing.T) {
	t.Parallel()
	rec := &recordingTB{TB: t}
	srv := modeltest.AnthropicServer(rec, modeltest.Reply("{}", model.Usage{}))
	if code := post(t, srv.BaseURL()+"/v1/complete"); code != http.StatusNotFound {
		t.Errorf("status = %d, want 404", code)
	}
	_ = post(t, srv.BaseURL()+"/v1/messages")
	if errs := rec.finish(); len(errs) != 1 || !strings.Contains(errs[0], "want POST /v1/messages") {
		t.Errorf("failures = %q", errs)
	}
}
