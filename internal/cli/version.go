package cli

import (
	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/report"
)

// version is set at build time with -ldflags "-X github.com/cuahq/cua/internal/cli.version=v1.2.3".
var version = ""

type versionOptions struct {
	IO   *IOStreams
	JSON bool
}

func newCmdVersion(f *Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the cua version",
		Args:  exactArgs(0, "no arguments"),
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

// Version returns the build's version string.
func Version() string { return report.BuildVersion(version) }

func runVersion(opts *versionOptions) error {
	v := report.Version(Version(), JSONSchemaVersion)
	if opts.JSON {
		return writeJSON(opts.IO.Out, v)
	}
	return v.Line(opts.IO.Out)
}
