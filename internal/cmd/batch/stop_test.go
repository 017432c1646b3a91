package batchcmd_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/mockapp"
)

// A `cua worker` (or `cua serve`) that gets SIGTERM or SIGINT mid-run drains: a run that
// ends within --stop-grace is finished, one that does not is cancelled
// and handed back, and another worker runs it once. Either way the worker
// exits 0 with one line saying so; the job's run is done exactly once.
func TestWorkerStopsGracefully(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cmd    []string // the command and its own flags
		sig    syscall.Signal
		slow   int    // content responses MemberDesk holds 3 s each (-1: all)
		grace  string // --stop-grace
		want   string
		resume bool // another worker must finish the job
	}{
		{name: "finishes_within_grace", cmd: []string{"worker"}, sig: syscall.SIGTERM, slow: 2, grace: "90s",
			want: "worker stopped: 1 jobs finished, 0 handed back"},
		{name: "hands_back_after_grace", cmd: []string{"worker"}, sig: syscall.SIGINT, slow: -1, grace: "1s",
			want: "worker stopped: 0 jobs finished, 1 handed back", resume: true},
		{name: "serve_finishes_within_grace", cmd: []string{"serve", "--addr", "127.0.0.1:0"}, sig: syscall.SIGTERM, slow: 2,
			grace: "90s", want: "serve stopped: 1 jobs finished, 0 handed back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := setup(t)
			ctx := context.Background()
			q, err := jobs.Open(ctx, jobs.Config{SQLitePath: jobs.QueuePath(w.dir)})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if err := w.ctl.Arm(ctx, mockapp.FaultSlow, tc.slow, 0); err != nil {
				t.Fatal(err)
			}
			j, err := q.Submit(ctx, jobs.RunArgs{Ref: "memberdesk.savings_balance@1.2.0", BaseURL: w.app.URL(),
				Inputs: map[string]string{"member_id": "12345"}})
			if err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			c := w.command(append(append(tc.cmd, "--workers", "1", "--job-timeout", "120s", "--stop-grace", tc.grace), w.allow...)...)
			c.Stderr = &logs
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Process.Kill() })
			waitState(t, q, j.ID, "running", &logs)
			time.Sleep(time.Second) // the run is in its browser
			sent := time.Now()
			if err := c.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = c.Wait()
			took := time.Since(sent)
			if err != nil {
				t.Fatalf("worker exited %v after %s, want 0; stderr:\n%s", err, took, tail(logs.String(), 3000))
			}
			out := logs.String()
			if n := strings.Count(out, " stopped:"); n != 1 || !strings.Contains(out, tc.want+"\n") {
				t.Fatalf("stderr has %d stop lines, want one %q:\n%s", n, tc.want, tail(out, 3000))
			}
			if strings.Contains(out, "interrupted") {
				t.Errorf("stderr says interrupted:\n%s", tail(out, 2000))
			}
			if tc.resume {
				if took > 1*time.Second+jobs.CancelWait+5*time.Second {
					t.Errorf("the stop took %s; want the grace and the cancel wait at most", took)
				}
				if err := w.ctl.Arm(ctx, mockapp.FaultSlow, 0, 0); err != nil {
					t.Fatal(err)
				}
				next := w.command(append([]string{"worker", "--workers", "1", "--job-timeout", "120s"}, w.allow...)...)
				next.Stderr = &logs
				if err := next.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { _ = next.Process.Signal(syscall.SIGTERM); _ = next.Wait() }()
			}
			got := waitState(t, q, j.ID, "completed", &logs)
			if got.Result == nil || got.Result.Class() != "done" {
				t.Fatalf("job %+v result %+v; want done", got, got.Result)
			}
			if tc.resume && (got.Result.RunID != jobs.RunID(j.ID, 2) || len(got.Errors) != 1 ||
				!strings.Contains(got.Errors[0], "handed back when its worker stopped")) {
				t.Errorf("resumed job: run %s, errors %q; want run %s after one handed-back attempt", got.Result.RunID, got.Errors, jobs.RunID(j.ID, 2))
			}
			if n := w.endedRuns(t)[fmt.Sprint("j", j.ID)]; n != 1 {
				t.Fatalf("job %d ran to the end %d times, want once; runs:\n%s", j.ID, n, w.runsTable(t))
			}
		})
	}
}

// waitState waits up to 150 s for job id to reach state.
func waitState(t *testing.T, q *jobs.Queue, id int64, state string, logs *syncBuffer) *jobs.Job {
	t.Helper()
	deadline := time.Now().Add(150 * time.Second)
	for {
		j, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == state {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s after 150s, want %s; workers:\n%s", id, j.State, state, tail(logs.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A second signal stops a draining worker at once: exit 130, its run left
// running for River to rescue, named in the one line.
func TestWorkerSecondSignalForcesStop(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	q, err := jobs.Open(ctx, jobs.Config{SQLitePath: jobs.QueuePath(w.dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := w.ctl.Arm(ctx, mockapp.FaultSlow, -1, 0); err != nil {
		t.Fatal(err)
	}
	j, err := q.Submit(ctx, jobs.RunArgs{Ref: "memberdesk.savings_balance@1.2.0", BaseURL: w.app.URL(),
		Inputs: map[string]string{"member_id": "12345"}})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	c := w.command(append([]string{"worker", "--workers", "1", "--job-timeout", "120s", "--rescue-after", "150s",
		"--stop-grace", "90s"}, w.allow...)...)
	c.Stderr = &logs
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill() })
	waitState(t, q, j.ID, "running", &logs)
	time.Sleep(time.Second)
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // draining: the run has 90s
	sent := time.Now()
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = c.Wait()
	took := time.Since(sent)
	if c.ProcessState == nil || c.ProcessState.ExitCode() != 130 || took > 5*time.Second {
		t.Fatalf("worker exited %v %s after the second signal; want 130 within 5s; stderr:\n%s", err, took, tail(logs.String(), 3000))
	}
	want := "worker stopped: 0 jobs finished, 0 handed back, 1 still running left for rescue after 2m30s\n"
	if out := logs.String(); strings.Count(out, " stopped:") != 1 || !strings.Contains(out, want) {
		t.Fatalf("stderr wants one line %q:\n%s", want, tail(out, 3000))
	}
}
