package interventionscmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	workercmd "github.com/cuahq/cua/internal/cmd/worker"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/store"
)

// Options are the flags every subcommand shares.
type Options struct {
	IO    *cmdutil.IOStreams
	Store launch.StoreOptions
	Queue jobs.Config
	JSON  bool
}

// NewCmdInterventions builds `cua interventions`.
func NewCmdInterventions(f *cmdutil.Factory) *cobra.Command {
	o := &Options{IO: f.IO, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{Use: "interventions", Short: "List, show and resolve the runs handed to a person",
		Long: cmdutil.Help(helpInterventions, false), Example: cmdutil.Help(helpInterventions, true)}
	cmdutil.StoreFlags(cmd, &o.Store, true)
	cmd.PersistentFlags().BoolVar(&o.JSON, "json", false, "print JSON")
	var status string
	list := &cobra.Command{Use: "list", Short: "List interventions, oldest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch store.InterventionStatus(status) {
			case "", store.InterventionOpen, store.InterventionClaimed, store.InterventionResolved:
			default:
				return cmdutil.FlagErrorf("--status %q: want open, claimed or resolved", status)
			}
			return o.with(cmd.Context(), func(ctx context.Context, q *jobs.Queue) error {
				ivs, err := q.Interventions(ctx, status)
				if err != nil {
					return err
				}
				if o.JSON {
					return cmdutil.WriteJSON(o.IO.Out, map[string]any{"interventions": ivs})
				}
				return writeList(o.IO.Out, ivs)
			})
		}}
	list.Flags().StringVar(&status, "status", "", "only interventions in this status: open, claimed or resolved")
	show := &cobra.Command{Use: "show ID", Short: "Show one intervention", Args: cmdutil.ExactArgs(1, "one intervention ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.with(cmd.Context(), func(ctx context.Context, q *jobs.Queue) error {
				iv, err := q.Intervention(ctx, args[0])
				return o.print(iv, err)
			})
		}}
	var landed, notLanded bool
	var note string
	resolve := &cobra.Command{Use: "resolve ID (--landed | --not-landed)", Short: "Record whether the run's effect landed",
		Args: cmdutil.ExactArgs(1, "one intervention ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// By is set once the store is open; Validate checks the rest.
			r := jobs.Resolution{Note: note, By: "-"}
			switch {
			case landed == notLanded:
				return cmdutil.FlagErrorf("want exactly one of --landed and --not-landed: say whether the effect happened in the application")
			case landed:
				r.Verdict = store.VerdictLanded
			default:
				r.Verdict = store.VerdictNotLanded
			}
			if err := r.Validate(); err != nil {
				return cmdutil.FlagErrorf("--%v", err)
			}
			return o.withStore(cmd.Context(), func(ctx context.Context, q *jobs.Queue, st store.Store) error {
				by, err := f.Principal(ctx, st)
				if err != nil {
					return err
				}
				r.By = by.String()
				iv, err := q.ResolveIntervention(ctx, args[0], r)
				return o.print(iv, err)
			})
		}}
	resolve.Flags().BoolVar(&landed, "landed", false, "the effect happened: the key stays bound to this run")
	resolve.Flags().BoolVar(&notLanded, "not-landed", false, "the effect did not happen: one new attempt may take the key")
	resolve.Flags().StringVar(&note, "note", "", "why (what you checked in the application)")
	cmd.AddCommand(list, show, resolve)
	return cmd
}

// with opens the catalog and a submit-only queue, runs fn, and closes them.
func (o *Options) with(ctx context.Context, fn func(context.Context, *jobs.Queue) error) error {
	return o.withStore(ctx, func(ctx context.Context, q *jobs.Queue, _ store.Store) error { return fn(ctx, q) })
}

// withStore is with, also handing fn the store (for the principal).
func (o *Options) withStore(ctx context.Context, fn func(context.Context, *jobs.Queue, store.Store) error) error {
	o.Queue.JobTimeout = time.Minute
	if err := workercmd.ResolveQueue(&o.Store, &o.Queue); err != nil {
		return err
	}
	q, _, st, done, err := workercmd.OpenClientCatalog(ctx, o.Store, o.Queue)
	if err != nil {
		return err
	}
	defer done()
	return fn(ctx, q, st)
}

func (o *Options) print(iv *jobs.Intervention, err error) error {
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.WriteJSON(o.IO.Out, iv)
	}
	return writeOne(o.IO.Out, iv)
}

// clean keeps a name printable on one line.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

func writeList(w io.Writer, ivs []*jobs.Intervention) error {
	if len(ivs) == 0 {
		_, err := fmt.Fprintln(w, "no interventions")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tCAPABILITY\tRUN\tEFFECTS\tWHY")
	for _, iv := range ivs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", clean(iv.ID), status(iv), dash(clean(iv.Capability)), clean(iv.RunID),
			effects(iv), clean(short(iv.Why, 80)))
	}
	return tw.Flush()
}

func writeOne(w io.Writer, iv *jobs.Intervention) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, clean(v)) }
	row("id", iv.ID)
	row("status", status(iv))
	row("capability", dash(iv.Capability))
	row("run", iv.RunID+" ("+dash(string(iv.RunStatus))+")")
	if iv.JobID != 0 {
		row("job", fmt.Sprint(iv.JobID))
	}
	row("step", dash(iv.Step))
	row("failure", dash(string(iv.FailureCode)))
	row("effects", effects(iv))
	for _, name := range slices.Sorted(maps.Keys(iv.Inputs)) {
		row("input "+name, iv.Inputs[name])
	}
	if iv.IdempotencyKey != "" {
		row("idempotency key", iv.IdempotencyKey)
	}
	row("why", iv.Why)
	row("created", iv.CreatedAt.UTC().Format(time.RFC3339))
	if !iv.ResolvedAt.IsZero() {
		row("resolved", iv.ResolvedAt.UTC().Format(time.RFC3339)+" by "+dash(iv.ResolvedBy))
		row("note", dash(iv.Note))
	}
	return tw.Flush()
}

func status(iv *jobs.Intervention) string {
	if iv.Verdict != "" {
		return iv.Status + " (" + strings.ReplaceAll(string(iv.Verdict), "_", " ") + ")"
	}
	return iv.Status
}

// effects says what the run may have sent, leading with the worst.
func effects(iv *jobs.Intervention) string {
	e := iv.Effects
	if e == nil || len(e.Steps) == 0 {
		if iv.RunStatus == "ABANDONED" {
			return "unknown (the run's process died)"
		}
		return "none recorded"
	}
	parts := make([]string, 0, len(e.Steps))
	for _, s := range e.Steps {
		parts = append(parts, s.Step+"="+string(s.Effect))
	}
	return strings.Join(parts, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
