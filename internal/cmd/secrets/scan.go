package secretscmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/secret"
)

// DefaultScanAllowFile lists path globs `cua secrets scan` skips.
const DefaultScanAllowFile = secret.DefaultAllowFile

type scanOptions struct {
	IO          *cmdutil.IOStreams
	Paths       []string
	SecretsFile string
	AllowFile   string
}

func NewCmdSecrets(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "secrets", Short: "Check files for secrets"}
	cmd.AddCommand(NewCmdSecretsScan(f, nil))
	return cmd
}

func NewCmdSecretsScan(f *cmdutil.Factory, runF func(context.Context, *scanOptions) error) *cobra.Command {
	opts := &scanOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:     "scan [PATH...]",
		Short:   "Fail on key-shaped strings and registered secrets in files",
		Long:    cmdutil.Help(helpScan, false),
		Example: cmdutil.Help(helpScan, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if len(opts.Paths) == 0 {
				opts.Paths = []string{"."}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSecretsScan(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values to look for (mode 0600)")
	cmd.Flags().StringVar(&opts.AllowFile, "allow", DefaultScanAllowFile, "file of path globs to skip")
	return cmd
}

func runSecretsScan(ctx context.Context, o *scanOptions) error {
	n, err := secret.ScanFiles(ctx, secret.ScanRequest{Paths: o.Paths, SecretsFile: o.SecretsFile, AllowFile: o.AllowFile},
		func(f secret.Finding) { fmt.Fprintf(o.IO.Out, "%s:%d: %s\n", f.Path, f.Line, f.Kind) })
	if err == nil && n > 0 {
		fmt.Fprintf(o.IO.ErrOut, "secrets scan: %d finding(s); remove them, or list a deliberate fixture in %s\n", n, o.AllowFile)
		return &cmdutil.ExitError{Code: 1}
	}
	return err
}
