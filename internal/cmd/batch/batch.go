package batchcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmd/worker"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
)

// BatchOptions are the flags of `cua batch`.
type BatchOptions struct {
	Worker workercmd.WorkerOptions
	Args   jobs.RunArgs
	Inputs string
	Out    string
	Rows   []jobs.Row
	// TTY forces the progress bar (true) or plain lines (false); nil
	// detects a terminal on stderr.
	TTY *bool
}

// NewCmdBatch builds `cua batch`.
func NewCmdBatch(f *cmdutil.Factory, runF func(context.Context, *BatchOptions) error) *cobra.Command {
	o := &BatchOptions{Worker: workercmd.WorkerOptions{IO: f.IO, Env: f.Getenv, Store: launch.StoreOptions{Getenv: f.Getenv}}}
	cmd := &cobra.Command{
		Use:     "batch ID[@VERSION] --inputs FILE.csv|FILE.jsonl",
		Short:   "Run a capability once per row of a file, through the queue, resumably",
		Long:    cmdutil.Help(helpBatch, false),
		Example: cmdutil.Help(helpBatch, true),
		Args:    cmdutil.ExactArgs(1, "one catalog ID[@VERSION] or sha256:HASH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args.Ref = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return Run(cmd.Context(), o)
		},
	}
	w := &o.Worker
	workercmd.QueueFlags(cmd, &w.Store, &w.Queue)
	workercmd.AllowOriginFlag(cmd, &w.AllowOrigins)
	fl := cmd.Flags()
	fl.Lookup("workers").Hidden = true
	fl.IntVar(&w.Queue.Workers, "sessions", 2, "runs this process works at once (0: leave them to cua worker)")
	fl.StringVar(&o.Inputs, "inputs", "", "rows to run: FILE.csv (header names the inputs) or FILE.jsonl")
	fl.StringVar(&o.Out, "out", "results.jsonl", "results file, one JSON record per row; a re-run resumes from it")
	fl.StringVar(&o.Args.BaseURL, "base-url", "http://127.0.0.1:8811", "base URL of the application")
	fl.StringVar(&o.Args.ContentHash, "hash", "", "pin every run to this content hash (sha256:…)")
	fl.BoolVar(&o.Args.Unattended, "unattended", false, "require a catalog approval covering each row's inputs")
	fl.StringArrayVar(&o.Args.ReleaseGates, "release-gate", nil, "release the gate before step ID (repeatable)")
	fl.Var(&o.Args.Evidence, "evidence-level", "screenshots each run keeps: full (every step), decisive (the capability's default), none (read-only capabilities only)")
	workercmd.SessionFlags(cmd, w)
	cmdutil.PublishEvidenceFlag(f, cmd)
	return cmd
}

// Validate checks every flag and reads the rows before the queue opens.
func (o *BatchOptions) Validate() error {
	if err := o.Worker.ValidateQueue("--sessions", 0); err != nil {
		return err
	}
	if o.Inputs == "" {
		return cmdutil.FlagErrorf("--inputs: a .csv or .jsonl file of rows is required")
	}
	if err := cmdutil.HTTPURL("--base-url", o.Args.BaseURL); err != nil {
		return err
	}
	o.Args.Batch = filepath.Base(o.Inputs)
	if err := o.Args.Validate(); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	rows, err := jobs.ReadRows(o.Inputs)
	if err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	o.Rows = rows
	return nil
}

// Run runs the batch.
func Run(ctx context.Context, o *BatchOptions) error {
	w := &o.Worker
	var q *jobs.Queue
	var err error
	if w.Queue.Workers > 0 {
		var stop func()
		if q, stop, err = workercmd.Start(ctx, w); err != nil {
			return err
		}
		defer stop()
	} else {
		var done func()
		if q, done, err = workercmd.OpenClient(ctx, w.Store, w.Queue); err != nil {
			return err
		}
		defer done()
	}
	tty := isTerminal(w.IO.ErrOut)
	if o.TTY != nil {
		tty = *o.TTY
	}
	pp := &printer{w: w.IO.ErrOut, tty: tty}
	pr, err := q.RunBatch(ctx, jobs.BatchParams{Args: o.Args, Rows: o.Rows, Out: o.Out, Progress: pp.print})
	pp.end(pr)
	if err != nil {
		return err
	}
	fmt.Fprintf(w.IO.Out, "%d rows: %d done, %d failed, %d needs-human (%d already done); results in %s\n",
		pr.Total, pr.Done, pr.Failed, pr.NeedsHuman, pr.Skipped, o.Out)
	switch {
	case pr.Failed > 0:
		return &cmdutil.ExitError{Code: 1}
	case pr.NeedsHuman > 0:
		return &cmdutil.ExitError{Code: 2}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// printer draws the progress: one redrawn bar on a terminal, else a plain
// line at most every second and when a row ends the batch.
type printer struct {
	w     io.Writer
	tty   bool
	last  time.Time
	shown [2]int // rows finished and rows waiting for a rescue, last shown
}

func (p *printer) print(pr jobs.Progress) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", Line(pr, true))
		return
	}
	now := [2]int{pr.Finished(), pr.Rescue}
	if time.Since(p.last) < time.Second && pr.Finished() != pr.Total || now == p.shown {
		return
	}
	p.last, p.shown = time.Now(), now
	fmt.Fprintln(p.w, Line(pr, false))
}

func (p *printer) end(pr jobs.Progress) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", Line(pr, true))
	}
}

// Line is one progress line; bar draws a 30-cell bar first.
func Line(pr jobs.Progress, bar bool) string {
	var b strings.Builder
	if bar {
		cells := 0
		if pr.Total > 0 {
			cells = pr.Finished() * 30 / pr.Total
		}
		b.WriteString("[" + strings.Repeat("#", cells) + strings.Repeat(".", 30-cells) + "] ")
	}
	fmt.Fprintf(&b, "%d/%d done %d failed %d needs-human %d  %.1f/s",
		pr.Finished(), pr.Total, pr.Done, pr.Failed, pr.NeedsHuman, pr.Rate())
	if pr.Rescue > 0 {
		fmt.Fprintf(&b, "  %d waiting for rescue of a stopped worker, up to %s", pr.Rescue, pr.RescueIn.Round(time.Second))
	}
	switch eta := pr.ETA(); {
	case pr.Rescue > 0 && eta == pr.RescueIn:
		b.WriteString("  ETA after the rescue and its rerun")
	case eta == 0 && pr.Finished() < pr.Total:
		b.WriteString("  ETA unknown")
	default:
		fmt.Fprintf(&b, "  ETA %s", eta.Round(time.Second))
	}
	return b.String()
}
