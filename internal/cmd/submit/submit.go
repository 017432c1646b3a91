package submitcmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmd/worker"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/report"
)

// SubmitOptions are the flags of `cua submit`.
type SubmitOptions struct {
	IO     *cmdutil.IOStreams
	Store  launch.StoreOptions
	Queue  jobs.Config
	Args   jobs.RunArgs
	Inputs []string
	// InputSecrets are --input-secret NAME=REF: a sensitive input as a
	// secret reference the worker resolves (its value never enters the
	// queue).
	InputSecrets []string
	Wait         bool
	JSON         bool
}

// NewCmdSubmit builds `cua submit`.
func NewCmdSubmit(f *cmdutil.Factory, runF func(context.Context, *SubmitOptions) error) *cobra.Command {
	o := &SubmitOptions{IO: f.IO, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{
		Use:     "submit ID[@VERSION]",
		Short:   "Queue one run of a catalog capability",
		Long:    cmdutil.Help(helpSubmit, false),
		Example: cmdutil.Help(helpSubmit, true),
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
	cmdutil.StoreFlags(cmd, &o.Store, true)
	a, fl := &o.Args, cmd.Flags()
	fl.StringArrayVarP(&o.Inputs, "input", "i", nil, "input as NAME=VALUE (repeatable)")
	fl.StringArrayVar(&o.InputSecrets, "input-secret", nil,
		"sensitive input as NAME=REF, a secret reference the worker resolves (CUA_SECRET_<REF> or --secrets); repeatable")
	fl.StringVar(&a.BaseURL, "base-url", "http://127.0.0.1:8811", "base URL of the application")
	fl.StringVar(&a.ContentHash, "hash", "", "pin the run to this content hash (sha256:…)")
	fl.StringVar(&a.IdempotencyKey, "idempotency-key", "", "binds for ever to the first job with these inputs: a second submit returns it; other inputs are refused")
	fl.IntVar(&a.Priority, "priority", 1, "1 (first) to 4")
	fl.BoolVar(&a.Unattended, "unattended", false, "require a catalog approval covering the inputs")
	fl.StringArrayVar(&a.ReleaseGates, "release-gate", nil, "release the gate before step ID (repeatable)")
	fl.BoolVar(&o.Wait, "wait", false, "wait for the run and print its result")
	fl.BoolVar(&o.JSON, "json", false, "print the job as JSON")
	return cmd
}

// Validate checks every flag before the queue opens.
func (o *SubmitOptions) Validate() error {
	o.Queue.JobTimeout = time.Minute
	if err := workercmd.ResolveQueue(&o.Store, &o.Queue); err != nil {
		return err
	}
	in, err := cmdutil.PairsFlag("--input", o.Inputs)
	if err != nil {
		return err
	}
	o.Args.Inputs = in
	refs, err := cmdutil.PairsFlag("--input-secret", o.InputSecrets)
	if err != nil {
		return err
	}
	o.Args.InputSecrets = refs
	if err := cmdutil.HTTPURL("--base-url", o.Args.BaseURL); err != nil {
		return err
	}
	if err := o.Args.Validate(); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	return nil
}

// Run submits the run and, with --wait, waits for it.
func Run(ctx context.Context, o *SubmitOptions) error {
	q, done, err := workercmd.OpenClient(ctx, o.Store, o.Queue)
	if err != nil {
		return err
	}
	defer done()
	j, err := q.Submit(ctx, o.Args)
	if err != nil {
		return err
	}
	if o.Wait {
		if j, err = q.Wait(ctx, j.ID, 100*time.Millisecond); err != nil {
			return err
		}
	}
	if o.JSON {
		err = cmdutil.WriteJSON(o.IO.Out, j)
	} else {
		err = Print(o.IO, j)
	}
	if err == nil && o.Wait {
		return exit(j)
	}
	return err
}

// Print writes one line about a job; once it ran, the run's result as cua
// replay prints it (effects, outcome, failure, outputs, duration, run id),
// one fact a line. A submit that found its key's job says so ("already
// ran as run R at T").
func Print(io *cmdutil.IOStreams, j *jobs.Job) error {
	dup := ""
	if j.Duplicate {
		dup = " (already submitted with this idempotency key)"
		if j.AlreadyRan != nil {
			dup = " (" + j.AlreadyRan.String() + ")"
		}
	}
	if j.Result == nil {
		_, err := fmt.Fprintf(io.Out, "job %d %s %s%s\n", j.ID, j.State, j.Args.Ref, dup)
		return err
	}
	r := j.Result
	var b strings.Builder
	fmt.Fprintf(&b, "job %d %s %s: %s%s%s\n", j.ID, j.State, j.Args.Ref, r.Status, human(r), dup)
	report.Facts(&b, r.Effects, r.Outcome, r.FailureCode, r.Message, r.Outputs)
	fmt.Fprintf(&b, "  duration     %d ms\n  run          %s\n", r.DurationMS, r.RunID)
	_, err := io.Out.Write([]byte(b.String()))
	return err
}

func human(r *jobs.Result) string {
	if r.NeedsHuman {
		return " needs a human (" + r.Intervention + ")"
	}
	return ""
}

func exit(j *jobs.Job) error {
	if j.Result == nil {
		return &cmdutil.ExitError{Code: 1}
	}
	if c := domain.RunStatus(j.Result.Status).ExitCode(); c != 0 {
		return &cmdutil.ExitError{Code: c}
	}
	return nil
}
