package mockappcmd

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/mockapp"
)

type mockappOptions struct {
	IO          *cmdutil.IOStreams
	Addr        string
	Variant     string
	AllowRemote bool
}

func NewCmdMockapp(f *cmdutil.Factory, runF func(*cobra.Command, *mockappOptions) error) *cobra.Command {
	opts := &mockappOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:     "mockapp",
		Short:   "Serve MemberDesk, the hostile back-office app used by the demo and tests",
		Long:    cmdutil.Help(helpMockapp, false),
		Example: cmdutil.Help(helpMockapp, true),
		Args:    cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
				return cmdutil.FlagErrorf("--addr %q: %v", opts.Addr, err)
			}
			if !opts.AllowRemote && !mockapp.IsLoopbackAddr(opts.Addr) {
				return cmdutil.FlagErrorf("--addr %q is not a loopback address; pass --allow-remote to serve MemberDesk (and its unauthenticated control API) beyond this machine", opts.Addr)
			}
			switch opts.Variant {
			case "a", "b", "c":
			default:
				return cmdutil.FlagErrorf("--variant %q: want a, b or c", opts.Variant)
			}
			if runF != nil {
				return runF(cmd, opts)
			}
			return runMockapp(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8811", "address to listen on")
	cmd.Flags().StringVar(&opts.Variant, "variant", "a", "UI variant: a, b (churned) or c (churned and renamed)")
	cmd.Flags().BoolVar(&opts.AllowRemote, "allow-remote", false, "allow --addr to bind an address other than loopback")
	return cmd
}

func runMockapp(cmd *cobra.Command, opts *mockappOptions) error {
	logger := slog.New(slog.NewTextHandler(opts.IO.ErrOut, nil))
	if !mockapp.IsLoopbackAddr(opts.Addr) {
		fmt.Fprintf(opts.IO.ErrOut, "warning: --allow-remote: MemberDesk listens on %s; anyone who reaches it can arm faults and reset its state\n", opts.Addr)
	}
	srv, err := mockapp.New(mockapp.Options{Addr: opts.Addr, Variant: opts.Variant, Logger: logger})
	if err != nil {
		return err
	}
	if err := srv.Open(); err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(opts.IO.Out, "MemberDesk (variant %s) listening on %s\n", opts.Variant, srv.URL())
	<-cmd.Context().Done()
	return nil
}
