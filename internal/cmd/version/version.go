package versioncmd

import (
	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/report"
)

type versionOptions struct {
	IO   *cmdutil.IOStreams
	JSON bool
}

func NewCmdVersion(f *cmdutil.Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the cua version",
		Args:  cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVersion(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func runVersion(opts *versionOptions) error {
	v := report.Version(cmdutil.Version(), cmdutil.JSONSchemaVersion)
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, v)
	}
	return v.Line(opts.IO.Out)
}
