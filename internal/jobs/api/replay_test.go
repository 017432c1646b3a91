package api_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/jobs/api"
)

// slowQueue is a queue whose one job ends after a delay, counting cancels.
type slowQueue struct {
	ends      time.Time
	delay     time.Duration
	cancelled atomic.Int32
}

func (q *slowQueue) Submit(_ context.Context, a jobs.RunArgs) (*jobs.Job, error) {
	q.ends = time.Now().Add(q.delay)
	return &jobs.Job{ID: 7, State: "available", Args: a}, nil
}

func (q *slowQueue) Get(_ context.Context, id int64) (*jobs.Job, error) {
	if time.Now().Before(q.ends) {
		return &jobs.Job{ID: id, State: "running"}, nil
	}
	return &jobs.Job{ID: id, State: "completed", Result: &jobs.Result{RunID: "j7-a1", Status: "SUCCESS"}}, nil
}

func (q *slowQueue) Cancel(_ context.Context, id int64) (*jobs.Job, error) {
	q.cancelled.Add(1)
	return &jobs.Job{ID: id, State: "cancelled"}, nil
}

func (q *slowQueue) List(context.Context, jobs.ListParams) ([]*jobs.Job, error) { return nil, nil }
func (q *slowQueue) Interventions(context.Context, string) ([]*jobs.Intervention, error) {
	return nil, nil
}
func (q *slowQueue) Intervention(context.Context, string) (*jobs.Intervention, error) {
	return nil, jobs.ErrNotFound
}
func (q *slowQueue) ResolveIntervention(context.Context, string, jobs.Resolution) (*jobs.Intervention, error) {
	return nil, jobs.ErrNotFound
}

// serveSlow serves the API over q on a real listener whose server read
// and write timeouts (300 ms) are shorter than the job.
func serveSlow(t *testing.T, q *slowQueue) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(q, ln.Addr().String(), "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	h.Engine(nil, "")
	srv := &http.Server{Handler: h, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestReplayOutlivesServerTimeouts: POST /v1/replay waits for a job longer
// than the server's read and write timeouts and answers it, cancelling
// nothing; a caller that goes away first cancels the job.
func TestReplayOutlivesServerTimeouts(t *testing.T) {
	q := &slowQueue{delay: time.Second}
	c := api.Client{URL: serveSlow(t, q), Token: "s3cret"}
	res, err := c.Replay(context.Background(), jobs.RunArgs{Ref: "x@1.0.0", BaseURL: "http://127.0.0.1:1"})
	if err != nil || res.Job == nil || res.Job.State != "completed" || q.cancelled.Load() != 0 {
		t.Fatalf("replay of a 1 s job under 300 ms server timeouts: %+v, %v, %d cancels; want the completed job, no cancel", res, err, q.cancelled.Load())
	}
	q = &slowQueue{delay: 5 * time.Second}
	c.URL = serveSlow(t, q)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Replay(ctx, jobs.RunArgs{Ref: "x@1.0.0", BaseURL: "http://127.0.0.1:1"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a caller that gave up: %v, want its deadline", err)
	}
	for end := time.Now().Add(2 * time.Second); q.cancelled.Load() == 0 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if q.cancelled.Load() != 1 {
		t.Fatalf("the job was cancelled %d times after its caller went away, want 1", q.cancelled.Load())
	}
	c.Token = "wrong"
	if _, err := c.Replay(context.Background(), jobs.RunArgs{Ref: "x@1.0.0"}); !errors.As(err, new(*api.Error)) {
		t.Fatalf("a wrong token: %v, want the API's 401", err)
	}
}
