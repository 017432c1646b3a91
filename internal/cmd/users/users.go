package userscmd

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
)

// NewCmdUsers builds `cua users`.
func NewCmdUsers(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "users", Short: "Add, list, disable and rotate the principals that act on cua",
		Long: cmdutil.Help(helpUsers, false), Example: cmdutil.Help(helpUsers, true)}
	var role string
	add := withDirectory(f, "add NAME --role operator|approver|admin", "Add a principal and print its token once",
		func(ctx context.Context, d *principal.Directory, by principal.Principal, name string) error {
			tok, err := d.Add(ctx, by, name, principal.Role(role))
			return printToken(f.IO, name, tok, err)
		})
	add.PreRunE = func(_ *cobra.Command, args []string) error {
		if err := principal.CheckRole(principal.Role(role)); err != nil {
			return cmdutil.FlagErrorf("--role: %v", err)
		}
		return nil
	}
	add.Flags().StringVar(&role, "role", "", "operator, approver or admin (required)")
	disable := withDirectory(f, "disable NAME", "Disable a principal: its token stops working",
		func(ctx context.Context, d *principal.Directory, by principal.Principal, name string) error {
			if err := d.Disable(ctx, by, name); err != nil {
				return err
			}
			_, err := fmt.Fprintf(f.IO.Out, "disabled %s\n", name)
			return err
		})
	rotate := withDirectory(f, "rotate NAME", "Give a principal a new token (printed once); the old one stops working",
		func(ctx context.Context, d *principal.Directory, by principal.Principal, name string) error {
			tok, err := d.Rotate(ctx, by, name)
			return printToken(f.IO, name, tok, err)
		})
	db := &launch.StoreOptions{Getenv: f.Getenv}
	list := &cobra.Command{Use: "list", Short: "List principals: name, role, created, by, state", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, st, err := cmdutil.OpenCatalog(c.Context(), *db)
			if err != nil {
				return err
			}
			defer st.Close()
			all, err := principal.NewDirectory(st, nil).List(c.Context())
			if err != nil {
				return err
			}
			return writeList(f.IO.Out, all, time.Now())
		}}
	cmdutil.StoreFlags(list, db, true)
	cmd.AddCommand(add, list, disable, rotate)
	return cmd
}

// withDirectory builds a subcommand of one NAME that opens the store,
// resolves who runs it (CUA_PRINCIPAL_TOKEN, else the OS user) and calls
// run with the directory.
func withDirectory(f *cmdutil.Factory, use, short string,
	run func(context.Context, *principal.Directory, principal.Principal, string) error) *cobra.Command {
	db := &launch.StoreOptions{Getenv: f.Getenv}
	cmd := &cobra.Command{Use: use, Short: short, Args: cmdutil.ExactArgs(1, "one NAME"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := principal.CheckName(args[0]); err != nil {
				return cmdutil.FlagErrorf("NAME: %v", err)
			}
			ctx := c.Context()
			_, st, err := cmdutil.OpenCatalog(ctx, *db)
			if err != nil {
				return err
			}
			defer st.Close()
			by, err := f.Principal(ctx, st)
			if err != nil {
				return err
			}
			return run(ctx, principal.NewDirectory(st, nil), by, args[0])
		}}
	cmdutil.StoreFlags(cmd, db, true)
	return cmd
}

// printToken prints the token alone on stdout, and on stderr that it is
// shown once.
func printToken(io *cmdutil.IOStreams, name, token string, err error) error {
	if err != nil {
		return err
	}
	fmt.Fprintf(io.ErrOut, "the token of %s is shown once, below: give it to them (CUA_PRINCIPAL_TOKEN); only its hash is kept\n", name)
	_, err = fmt.Fprintln(io.Out, token)
	return err
}

// writeList prints principals as a table.
func writeList(w io.Writer, all []store.PrincipalRecord, now time.Time) error {
	if len(all) == 0 {
		_, err := fmt.Fprintln(w, "no principals (cua users add NAME --role admin)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tCREATED\tBY\tSTATE")
	for _, p := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Role, p.CreatedAt.UTC().Format(time.RFC3339), p.CreatedBy, state(p, now))
	}
	return tw.Flush()
}

// state says whether a principal is active, disabled or locked.
func state(p store.PrincipalRecord, now time.Time) string {
	switch {
	case !p.DisabledAt.IsZero():
		return "disabled"
	case p.LockedUntil.After(now):
		return "locked until " + p.LockedUntil.UTC().Format(time.RFC3339)
	}
	return "active"
}
