package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/store"
)

// storeFlags binds --db and, with dataDir, --data-dir into o.
func storeFlags(cmd *cobra.Command, o *launch.StoreOptions, dataDir bool) {
	cmd.Flags().StringVar(&o.DB, "db", "", "PostgreSQL URL (default $CUA_DB, else SQLite at <data-dir>/cua.db)")
	if dataDir {
		dataDirFlag(cmd, &o.DataDir)
	}
}

// openCatalog opens the store o locates and the catalog over it; close the
// store after use.
func openCatalog(ctx context.Context, o launch.StoreOptions) (*catalog.Catalog, store.Store, error) {
	cat, st, err := launch.Catalog(ctx, o)
	if errors.Is(err, launch.ErrDBSpec) {
		return nil, nil, flagErrorf("--db: %v", err)
	}
	return cat, st, err
}

// catCmd builds a subcommand that opens the catalog and calls run.
func catCmd(f *Factory, use, short string, args cobra.PositionalArgs, run func(context.Context, *catalog.Catalog, []string) error) *cobra.Command {
	db := &launch.StoreOptions{Getenv: f.Getenv}
	cmd := &cobra.Command{Use: use, Short: short, Args: args, RunE: func(c *cobra.Command, a []string) error {
		cat, st, err := openCatalog(c.Context(), *db)
		if err != nil {
			return err
		}
		defer st.Close()
		return run(c.Context(), cat, a)
	}}
	storeFlags(cmd, db, true)
	return cmd
}

func newCmdCatalog(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Add, inspect, diff and approve capability versions in the store",
		Long: help("catalog", false), Example: help("catalog", true)}
	out := f.IO.Out
	cmd.AddCommand(catCmd(f, "add FILE...", "Add sealed capability files (id@version is immutable)", cobra.MinimumNArgs(1),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			for _, file := range args {
				r, err := cat.AddFile(ctx, file)
				if err != nil {
					return err
				}
				catalog.WriteAdded(out, r)
			}
			return nil
		}))
	cmd.AddCommand(catCmd(f, "list [ID]", "List stored versions", cobra.MaximumNArgs(1),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			vs, err := cat.List(ctx, strings.Join(args, ""))
			return write(out, vs, err, catalog.WriteVersions)
		}))
	cmd.AddCommand(catCmd(f, "show REF", "Show a version's integrity, approvals and last runs", exactArgs(1, "one REF"),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			d, err := cat.Show(ctx, args[0])
			return write(out, d, err, catalog.WriteDetail)
		}))
	cmd.AddCommand(catCmd(f, "diff A B", "Semantic difference between two versions", exactArgs(2, "two REFs"),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			cs, err := cat.DiffRefs(ctx, args[0], args[1])
			for _, c := range cs {
				fmt.Fprintln(out, c)
			}
			return err
		}))
	cmd.AddCommand(catCmd(f, "revoke ID", "Revoke an approval", exactArgs(1, "one approval ID"),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			a, err := cat.Revoke(ctx, args[0])
			return write(out, a, err, catalog.WriteRevoked)
		}))
	cmd.AddCommand(newCmdCatalogApprove(f), newCmdCatalogOverlay(f))
	return cmd
}

// write prints v with print, unless err is set.
func write[T any](w io.Writer, v T, err error, print func(io.Writer, T) error) error {
	if err != nil {
		return err
	}
	return print(w, v)
}

func newCmdCatalogApprove(f *Factory) *cobra.Command {
	var p catalog.ApproveParams
	var maxes, allowed, patterns, inputs []string
	var expires, schemaFile string
	cmd := catCmd(f, "approve REF", "Approve a version for unattended use, within input bounds", exactArgs(1, "one REF"),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			a, err := cat.Approve(ctx, args[0], p)
			return write(f.IO.Out, a, err, catalog.WriteApproved)
		})
	cmd.PreRunE = func(*cobra.Command, []string) (err error) {
		if p.Max, err = pairsFlag("--max", maxes); err != nil {
			return err
		}
		if p.Pattern, err = pairsFlag("--pattern", patterns); err != nil {
			return err
		}
		if p.Inputs, err = pairsFlag("--input", inputs); err != nil {
			return err
		}
		al, err := pairsFlag("--allowed", allowed)
		if err != nil {
			return err
		}
		p.Allowed = catalog.SplitAllowed(al)
		if p.Expires, err = catalog.ParseExpiry(expires); err != nil {
			return flagErrorf("--expires %v", err)
		}
		if schemaFile != "" {
			if p.InputsSchema, err = capability.ReadBounded(schemaFile, capability.MaxApprovalSize); err != nil {
				return fmt.Errorf("--inputs-schema: %w", err)
			}
		}
		return nil
	}
	fl := cmd.Flags()
	fl.BoolVar(&p.FromEval, "from-eval", false, fmt.Sprintf("require %d successful eval replays of this exact content", catalog.MinEvalRuns))
	fl.StringArrayVar(&maxes, "max", nil, "inclusive ceiling NAME=VALUE (repeatable)")
	fl.StringArrayVar(&allowed, "allowed", nil, "allowed values NAME=V1,V2 (repeatable)")
	fl.StringArrayVar(&patterns, "pattern", nil, "regular expression NAME=RE (repeatable)")
	fl.StringVar(&schemaFile, "inputs-schema", "", "JSON Schema FILE the run's inputs must satisfy (money and numbers as numbers)")
	fl.StringVar(&expires, "expires", "", "lifetime, such as 30d or 36h (default: none)")
	fl.StringVar(&p.Note, "note", "", "why it is approved")
	fl.StringVar(&p.Approver, "approver", "", "who approves (default: the OS user)")
	fl.BoolVar(&p.Once, "once", false, "approve one run with exactly the --input values")
	fl.StringArrayVarP(&inputs, "input", "i", nil, "exact input NAME=VALUE of a --once approval (repeatable)")
	return cmd
}

func newCmdCatalogOverlay(f *Factory) *cobra.Command {
	var o catalog.Overlay
	var sets, targets []string
	cmd := catCmd(f, "overlay BASE", "Add a tenant's overlay of a version as a version of its own", exactArgs(1, "one BASE ref"),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			r, err := cat.AddOverlay(ctx, args[0], o)
			return write(f.IO.Out, r, err, catalog.WriteAdded)
		})
	cmd.PreRunE = func(*cobra.Command, []string) error {
		set, err := pairsFlag("--set", sets)
		if err != nil {
			return err
		}
		if err := o.SetFields(set); err != nil {
			return flagErrorf("--set %v", err)
		}
		o.Targets, err = pairsFlag("--target", targets)
		return err
	}
	cmd.Flags().StringVar(&o.Tenant, "tenant", "", "tenant name (becomes the version's build metadata)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "base_url=ORIGIN")
	cmd.Flags().StringArrayVar(&targets, "target", nil, "relabel a step: STEP=ROLE:NAME (repeatable)")
	return cmd
}
