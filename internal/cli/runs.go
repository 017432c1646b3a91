package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/store"
)

func newCmdRuns(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "runs", Short: "List and show runs from the run index", Long: help("runs", false), Example: help("runs", true)}
	var flt store.RunFilter
	var status string
	var since time.Duration
	list := catCmd(f, "list", "List runs, newest first", cobra.NoArgs, func(ctx context.Context, cat *catalog.Catalog, _ []string) error {
		rs, err := cat.Runs(ctx, flt)
		return write(f.IO.Out, rs, err, catalog.WriteRuns)
	})
	list.PreRunE = func(*cobra.Command, []string) (err error) {
		if flt.Status, err = catalog.ParseRunStatus(status); err != nil {
			return flagErrorf("--status %v", err)
		}
		if since < 0 {
			return flagErrorf("--since %s: want a positive duration", since)
		} else if since > 0 {
			flt.Since = time.Now().Add(-since)
		}
		return nil
	}
	list.Flags().StringVar(&flt.CapabilityID, "capability", "", "only runs of this capability id")
	list.Flags().StringVar(&status, "status", "", "only runs with this status")
	list.Flags().DurationVar(&since, "since", 0, "only runs started within this duration (such as 24h)")
	list.Flags().IntVar(&flt.Limit, "limit", 50, "at most this many runs (0: all)")
	show := catCmd(f, "show ID", "Show one run of the index", exactArgs(1, "one run ID"), func(ctx context.Context, cat *catalog.Catalog, args []string) error {
		r, err := cat.Run(ctx, args[0])
		return write(f.IO.Out, r, err, catalog.WriteRun)
	})
	cmd.AddCommand(list, show)
	return cmd
}
