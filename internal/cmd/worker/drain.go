package workercmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/jobs"
)

// StopGraceFlag binds --stop-grace and marks cmd as draining on a signal
// (cmdutil.DrainsOnSignal): the root waits for its drain.
func StopGraceFlag(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().DurationVar(d, "stop-grace", 25*time.Second,
		"on SIGINT or SIGTERM, give running runs this long to end before cancelling them (a second signal stops at once)")
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[cmdutil.DrainsOnSignal] = "true"
}

// CheckStopGrace validates --stop-grace.
func CheckStopGrace(d time.Duration) error {
	if d < 0 {
		return cmdutil.FlagErrorf("--stop-grace: want 0 or a positive duration, got %s", d)
	}
	return nil
}

// OnSignal returns a channel closed at the next SIGINT or SIGTERM this
// process gets, and what stops listening.
func OnSignal() (<-chan struct{}, func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	force, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-sig:
			close(force)
		case <-done:
		}
	}()
	return force, func() { signal.Stop(sig); close(done) }
}

// Drain drains q's workers (jobs.Queue.Drain: running runs get
// o.StopGrace, then are cancelled and handed back) and prints one line
// saying how who's jobs ended. A close of force (a second signal) stops
// at once: that exits 130, its running runs left for River to rescue.
func Drain(ctx context.Context, o *WorkerOptions, q *jobs.Queue, who string, force <-chan struct{}) error {
	d := q.Drain(ctx, o.StopGrace, force)
	line := fmt.Sprintf("%s stopped: %d jobs finished, %d handed back", who, d.Finished, d.HandedBack)
	if d.Abandoned > 0 {
		line += fmt.Sprintf(", %d still running left for rescue after %s", d.Abandoned, rescueAfter(o.Queue))
	}
	fmt.Fprintln(o.IO.ErrOut, line)
	select {
	case <-force:
		return &cmdutil.ExitError{Code: 130}
	default:
		return nil
	}
}

func rescueAfter(q jobs.Config) time.Duration {
	if q.RescueAfter > 0 {
		return q.RescueAfter
	}
	return q.JobTimeout + 30*time.Second
}
