package profilecmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/receipt"
)

type profileOptions struct {
	IO   *cmdutil.IOStreams
	Host string
}

func NewCmdProfile(f *cmdutil.Factory, runF func(*profileOptions) error) *cobra.Command {
	opts := &profileOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:     "profile [--host browser|state_contract|desktop]",
		Short:   "Print this runtime's capability profile (JSON)",
		Long:    cmdutil.Help(helpProfile, false),
		Example: cmdutil.Help(helpProfile, true),
		Args:    cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runProfile(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Host, "host", receipt.HostBrowser, "host kind: browser, state_contract or desktop")
	return cmd
}

func runProfile(opts *profileOptions) error {
	p, err := receipt.NewProfile(opts.Host)
	if err != nil {
		return cmdutil.FlagErrorf("--host %q: want %s, %s or %s", opts.Host, receipt.HostBrowser, receipt.HostState, receipt.HostDesktop)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	if err := receipt.Validate(receipt.KindProfile, raw); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	return cmdutil.WriteJSON(opts.IO.Out, p)
}
