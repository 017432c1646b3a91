package catalogcmd

import (
	"context"
	_ "embed"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/toolspec"
)

//go:embed exporttools.txt
var helpExportTools string

// NewCmdCatalogExportTools is `cua catalog export-tools`.
func NewCmdCatalogExportTools(f *cmdutil.Factory) *cobra.Command {
	var format string
	var fm toolspec.Format
	cmd := cmdutil.CatalogCmd(f, "export-tools [REF...]", "Write the tool definitions of approved capabilities (OpenAI, Anthropic, MCP)",
		cobra.ArbitraryArgs, func(ctx context.Context, cat *catalog.Catalog, args []string) error {
			specs, err := toolspec.Approved(ctx, cat, time.Now(), args)
			if err != nil {
				return err
			}
			return toolspec.Write(f.IO.Out, fm, specs)
		})
	cmd.Long, cmd.Example = cmdutil.Help(helpExportTools, false), cmdutil.Help(helpExportTools, true)
	cmd.Flags().StringVar(&format, "format", string(toolspec.FormatOpenAI), "openai, anthropic or mcp")
	cmd.PreRunE = func(*cobra.Command, []string) (err error) {
		if fm, err = toolspec.ParseFormat(format); err != nil {
			return cmdutil.FlagErrorf("--format: %v", err)
		}
		return nil
	}
	return cmd
}
