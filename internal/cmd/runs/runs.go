package runscmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/store"
)

func NewCmdRuns(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "runs", Short: "List and show runs from the run index", Long: cmdutil.Help(helpRuns, false), Example: cmdutil.Help(helpRuns, true)}
	var flt store.RunFilter
	var status string
	var since time.Duration
	list := cmdutil.CatalogCmd(f, "list", "List runs, newest first", cobra.NoArgs, func(ctx context.Context, cat *catalog.Catalog, _ []string) error {
		rs, err := cat.Runs(ctx, flt)
		return cmdutil.Write(f.IO.Out, rs, err, catalog.WriteRuns)
	})
	list.PreRunE = func(*cobra.Command, []string) (err error) {
		if flt.Status, err = catalog.ParseRunStatus(status); err != nil {
			return cmdutil.FlagErrorf("--status %v", err)
		}
		if since < 0 {
			return cmdutil.FlagErrorf("--since %s: want a positive duration", since)
		} else if since > 0 {
			flt.Since = time.Now().Add(-since)
		}
		return nil
	}
	list.Flags().StringVar(&flt.CapabilityID, "capability", "", "only runs of this capability id")
	list.Flags().StringVar(&status, "status", "", "only runs with this status")
	list.Flags().DurationVar(&since, "since", 0, "only runs started within this duration (such as 24h)")
	list.Flags().IntVar(&flt.Limit, "limit", 50, "at most this many runs (0: all)")
	show := cmdutil.CatalogCmd(f, "show ID", "Show one run of the index", cmdutil.ExactArgs(1, "one run ID"), func(ctx context.Context, cat *catalog.Catalog, args []string) error {
		r, err := cat.Run(ctx, args[0])
		return cmdutil.Write(f.IO.Out, r, err, catalog.WriteRun)
	})
	cmd.AddCommand(list, show)
	return cmd
}
