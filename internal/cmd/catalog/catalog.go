package catalogcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/principal"
)

func NewCmdCatalog(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Add, inspect, diff and approve capability versions in the store",
		Long: cmdutil.Help(helpCatalog, false), Example: cmdutil.Help(helpCatalog, true)}
	out := f.IO.Out
	cmd.AddCommand(cmdutil.CatalogCmd(f, "add FILE...", "Add sealed capability files (id@version is immutable)", cobra.MinimumNArgs(1),
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
	cmd.AddCommand(cmdutil.CatalogCmd(f, "list [ID]", "List stored versions", cobra.MaximumNArgs(1),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			vs, err := cat.List(ctx, strings.Join(args, ""))
			return cmdutil.Write(out, vs, err, catalog.WriteVersions)
		}))
	cmd.AddCommand(cmdutil.CatalogCmd(f, "show REF", "Show a version's integrity, approvals and last runs", cmdutil.ExactArgs(1, "one REF"),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			d, err := cat.Show(ctx, args[0])
			return cmdutil.Write(out, d, err, catalog.WriteDetail)
		}))
	cmd.AddCommand(cmdutil.CatalogCmd(f, "diff A B", "Semantic difference between two versions", cmdutil.ExactArgs(2, "two REFs"),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			cs, err := cat.DiffRefs(ctx, args[0], args[1])
			for _, c := range cs {
				fmt.Fprintln(out, c)
			}
			return err
		}))
	cmd.AddCommand(approverCmd(f, "revoke ID", "Revoke an approval", cmdutil.ExactArgs(1, "one approval ID"),
		func(ctx context.Context, cat *catalog.Catalog, by principal.Principal, args []string) error {
			a, err := cat.RevokeBy(ctx, args[0], by.String())
			return cmdutil.Write(out, a, err, catalog.WriteRevoked)
		}))
	cmd.AddCommand(NewCmdCatalogApprove(f), NewCmdCatalogOverlay(f), NewCmdCatalogExportTools(f))
	return cmd
}

func NewCmdCatalogApprove(f *cmdutil.Factory) *cobra.Command {
	var p catalog.ApproveParams
	var maxes, allowed, patterns, inputs []string
	var expires, schemaFile string
	cmd := approverCmd(f, "approve REF", "Approve a version for unattended use, within input bounds", cmdutil.ExactArgs(1, "one REF"),
		func(ctx context.Context, cat *catalog.Catalog, by principal.Principal, args []string) error {
			p.Approver = by.String()
			a, err := cat.Approve(ctx, args[0], p)
			return cmdutil.Write(f.IO.Out, a, err, catalog.WriteApproved)
		})
	cmd.PreRunE = func(*cobra.Command, []string) (err error) {
		if p.Max, err = cmdutil.PairsFlag("--max", maxes); err != nil {
			return err
		}
		if p.Pattern, err = cmdutil.PairsFlag("--pattern", patterns); err != nil {
			return err
		}
		if p.Inputs, err = cmdutil.PairsFlag("--input", inputs); err != nil {
			return err
		}
		al, err := cmdutil.PairsFlag("--allowed", allowed)
		if err != nil {
			return err
		}
		p.Allowed = catalog.SplitAllowed(al)
		if p.Expires, err = catalog.ParseExpiry(expires); err != nil {
			return cmdutil.FlagErrorf("--expires %v", err)
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
	fl.StringVar(&p.AcceptUnarmed, "accept-unarmed", "", "accept, for REASON, a capability that reads a record with no check that it is the one asked for (recorded in the note)")
	fl.StringVar(&p.AcceptScreenOnly, "accept-screen-only", "", "accept, for REASON, a capability with an irreversible write no effect contract covers (recorded in the note)")
	fl.BoolVar(&p.Once, "once", false, "approve one run with exactly the --input values")
	fl.StringArrayVarP(&inputs, "input", "i", nil, "exact input NAME=VALUE of a --once approval (repeatable)")
	return cmd
}

func NewCmdCatalogOverlay(f *cmdutil.Factory) *cobra.Command {
	var o catalog.Overlay
	var sets, targets []string
	cmd := cmdutil.CatalogCmd(f, "overlay BASE", "Add a tenant's overlay of a version as a version of its own", cmdutil.ExactArgs(1, "one BASE ref"),
		func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			r, err := cat.AddOverlay(ctx, args[0], o)
			return cmdutil.Write(f.IO.Out, r, err, catalog.WriteAdded)
		})
	cmd.PreRunE = func(*cobra.Command, []string) error {
		set, err := cmdutil.PairsFlag("--set", sets)
		if err != nil {
			return err
		}
		if err := o.SetFields(set); err != nil {
			return cmdutil.FlagErrorf("--set %v", err)
		}
		o.Targets, err = cmdutil.PairsFlag("--target", targets)
		return err
	}
	cmd.Flags().StringVar(&o.Tenant, "tenant", "", "tenant name (becomes the version's build metadata)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "base_url=ORIGIN")
	cmd.Flags().StringArrayVar(&targets, "target", nil, "relabel a step: STEP=ROLE:NAME (repeatable)")
	return cmd
}

// approverCmd builds a subcommand that opens the catalog, resolves who runs
// it (CUA_PRINCIPAL_TOKEN, else the OS user, unverified) and calls run. A
// verified principal needs the approver or admin role; a bad token is an
// error naming CUA_PRINCIPAL_TOKEN, and nothing is written.
func approverCmd(f *cmdutil.Factory, use, short string, args cobra.PositionalArgs,
	run func(context.Context, *catalog.Catalog, principal.Principal, []string) error) *cobra.Command {
	db := &launch.StoreOptions{Getenv: f.Getenv}
	cmd := &cobra.Command{Use: use, Short: short, Args: args, RunE: func(c *cobra.Command, a []string) error {
		ctx := c.Context()
		cat, st, err := cmdutil.OpenCatalog(ctx, *db)
		if err != nil {
			return err
		}
		defer st.Close()
		by, err := f.Principal(ctx, st)
		if err != nil {
			return err
		}
		if err := by.Permit(c.Name(), principal.Approver, principal.Admin); err != nil {
			return err
		}
		return run(ctx, cat, by, a)
	}}
	cmdutil.StoreFlags(cmd, db, true)
	return cmd
}
