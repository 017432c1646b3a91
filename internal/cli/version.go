package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/domain"
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
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev+" + s.Value[:12]
			}
		}
		if v != "" && v != "(devel)" {
			return v
		}
	}
	return "dev"
}

func runVersion(opts *versionOptions) error {
	if opts.JSON {
		return writeJSON(opts.IO.Out, map[string]any{
			"schema_version":            JSONSchemaVersion,
			"version":                   Version(),
			"go":                        runtime.Version(),
			"capability_schema_version": domain.SchemaVersion,
		})
	}
	_, err := fmt.Fprintf(opts.IO.Out, "cua %s (%s, capability schema %d)\n", Version(), runtime.Version(), domain.SchemaVersion)
	return err
}
