package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
)

// drainStats counts how a worker process's jobs ended, for [Queue.Drain].
type drainStats struct {
	running    atomic.Int64
	finished   atomic.Int64
	handedBack atomic.Int64
	cancelling atomic.Bool
}

// counted is the worker River runs: [Worker] with its jobs counted.
type counted struct {
	*Worker
	st *drainStats
}

// Work implements river.Worker: a job that ends (a result recorded, or
// cancelled for good) is finished; one whose attempt the drain cancelled
// and that returns to the queue for another worker is handed back.
//
// A handed-back attempt's error is returned without the context's
// cancellation in its chain: River would otherwise put the job back as if
// the attempt had never been made (its attempt number taken back), and
// the next attempt would reuse the run id the cancelled one was indexed
// under, hiding it from the retry rule. Counted, the next attempt is a new
// run that checks this one first (see Worker.prior).
func (c counted) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	c.st.running.Add(1)
	defer c.st.running.Add(-1)
	err := c.Worker.Work(ctx, job)
	var cancel *river.JobCancelError
	switch {
	case err == nil || errors.As(err, &cancel):
		c.st.finished.Add(1)
	case c.st.cancelling.Load() && ctx.Err() != nil:
		c.st.handedBack.Add(1)
		jobLog(ctx).Info("handed back when its worker stopped: another worker runs it as a new attempt")
		return fmt.Errorf("handed back when its worker stopped: %s", err.Error())
	}
	return err
}

// Drained is how a worker process's jobs ended when it stopped.
type Drained struct {
	// Finished counts the jobs this process ended over its life: a result
	// recorded, or cancelled for good (refused, handed to a person).
	Finished int
	// HandedBack counts the jobs whose attempt the stop cancelled having
	// sent no effect: River gives them to another worker.
	HandedBack int
	// Abandoned counts the jobs still running when the stop gave up
	// waiting: River rescues them after the rescue delay (see
	// [Config.RescueAfter]), as it does a killed worker's.
	Abandoned int
}

// CancelWait bounds how long [Queue.Drain] waits for cancelled runs to
// return once their contexts are cancelled.
const CancelWait = 10 * time.Second

// Drain stops this process's workers: they take no new job; the jobs they
// hold have grace to end, after which their contexts are cancelled
// (River's StopAndCancel) and Drain waits at most [CancelWait] for them. A
// run cancelled before it sent an effect is retried by another worker; one
// that sent an effect keeps its result (or goes to a person), as always.
// Closing force cuts the grace short and the wait too. ctx is for the
// stop's own database calls; it may be done already.
func (q *Queue) Drain(ctx context.Context, grace time.Duration, force <-chan struct{}) Drained {
	if q.workers == 0 || q.stats == nil {
		return Drained{}
	}
	q.drained.Store(true)
	ctx = context.WithoutCancel(ctx)
	gctx, cancel := context.WithCancel(ctx)
	t := time.AfterFunc(grace, cancel)
	go func() {
		select {
		case <-force:
			cancel()
		case <-gctx.Done():
		}
	}()
	err := q.c.Stop(gctx)
	t.Stop()
	cancel()
	if err != nil {
		q.stats.cancelling.Store(true)
		cctx, ccancel := context.WithTimeout(ctx, CancelWait)
		go func() {
			select {
			case <-force:
				ccancel()
			case <-cctx.Done():
			}
		}()
		_ = q.c.StopAndCancel(cctx)
		ccancel()
	}
	st := q.stats
	return Drained{Finished: int(st.finished.Load()), HandedBack: int(st.handedBack.Load()), Abandoned: int(st.running.Load())}
}
