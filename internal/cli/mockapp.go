package cli

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/mockapp"
)

type mockappOptions struct {
	IO      *IOStreams
	Addr    string
	Variant string
}

func newCmdMockapp(f *Factory, runF func(*mockappOptions) error) *cobra.Command {
	opts := &mockappOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "mockapp",
		Short: "Serve MemberDesk, the hostile back-office app used by the demo and tests",
		Long: heredoc.Doc(`
			Serve the MemberDesk mock back office until interrupted. Faults are armed
			over HTTP: POST /_control/arm {"fault": NAME, "count": N}; see
			GET /_control/state. Variant b churns every id, class and layout; variant
			c also renames labels.
		`),
		Example: heredoc.Doc(`
			$ cua mockapp --addr 127.0.0.1:8811
			$ curl -X POST 127.0.0.1:8811/_control/arm -d '{"fault":"transient_load","count":1}'
		`),
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
				return flagErrorf("--addr %q: %v", opts.Addr, err)
			}
			switch opts.Variant {
			case "a", "b", "c":
			default:
				return flagErrorf("--variant %q: want a, b or c", opts.Variant)
			}
			if runF != nil {
				return runF(opts)
			}
			return runMockapp(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8811", "address to listen on")
	cmd.Flags().StringVar(&opts.Variant, "variant", "a", "UI variant: a, b (churned) or c (churned and renamed)")
	return cmd
}

func runMockapp(cmd *cobra.Command, opts *mockappOptions) error {
	logger := slog.New(slog.NewTextHandler(opts.IO.ErrOut, nil))
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
