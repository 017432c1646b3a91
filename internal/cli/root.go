package cli

import (
	"github.com/spf13/cobra"

	batchcmd "github.com/cuahq/cua/internal/cmd/batch"
	capabilitycmd "github.com/cuahq/cua/internal/cmd/capability"
	catalogcmd "github.com/cuahq/cua/internal/cmd/catalog"
	codegencmd "github.com/cuahq/cua/internal/cmd/codegen"
	consolecmd "github.com/cuahq/cua/internal/cmd/console"
	democmd "github.com/cuahq/cua/internal/cmd/demo"
	discovercmd "github.com/cuahq/cua/internal/cmd/discover"
	healcmd "github.com/cuahq/cua/internal/cmd/heal"
	interventionscmd "github.com/cuahq/cua/internal/cmd/interventions"
	keyscmd "github.com/cuahq/cua/internal/cmd/keys"
	mcpcmd "github.com/cuahq/cua/internal/cmd/mcp"
	mockappcmd "github.com/cuahq/cua/internal/cmd/mockapp"
	observecmd "github.com/cuahq/cua/internal/cmd/observe"
	profilecmd "github.com/cuahq/cua/internal/cmd/profile"
	recordcmd "github.com/cuahq/cua/internal/cmd/record"
	replaycmd "github.com/cuahq/cua/internal/cmd/replay"
	runscmd "github.com/cuahq/cua/internal/cmd/runs"
	secretscmd "github.com/cuahq/cua/internal/cmd/secrets"
	servecmd "github.com/cuahq/cua/internal/cmd/serve"
	submitcmd "github.com/cuahq/cua/internal/cmd/submit"
	userscmd "github.com/cuahq/cua/internal/cmd/users"
	verifycmd "github.com/cuahq/cua/internal/cmd/verify"
	versioncmd "github.com/cuahq/cua/internal/cmd/version"
	workercmd "github.com/cuahq/cua/internal/cmd/worker"
	"github.com/cuahq/cua/internal/cmdutil"
)

// NewRootCmd builds the command tree: one line per command package.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "cua",
		Short:         "Compile a UI workflow once, replay it deterministically with no model",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
	root.AddCommand(versioncmd.NewCmdVersion(f, nil))
	root.AddCommand(capabilitycmd.NewCmdCapability(f))
	root.AddCommand(mockappcmd.NewCmdMockapp(f, nil))
	root.AddCommand(replaycmd.NewCmdReplay(f, nil))
	root.AddCommand(democmd.NewCmdDemo(f, nil))
	root.AddCommand(discovercmd.NewCmdDiscover(f, nil))
	root.AddCommand(recordcmd.NewCmdRecord(f, nil))
	root.AddCommand(secretscmd.NewCmdSecrets(f))
	root.AddCommand(catalogcmd.NewCmdCatalog(f))
	root.AddCommand(runscmd.NewCmdRuns(f))
	root.AddCommand(interventionscmd.NewCmdInterventions(f))
	root.AddCommand(verifycmd.NewCmdVerify(f, nil))
	root.AddCommand(keyscmd.NewCmdKeys(f))
	root.AddCommand(profilecmd.NewCmdProfile(f, nil))
	root.AddCommand(observecmd.NewCmdObserve(f, nil))
	root.AddCommand(mcpcmd.NewCmdMCP(f, nil))
	root.AddCommand(codegencmd.NewCmdCodegen(f, nil))
	root.AddCommand(consolecmd.NewCmdConsole(f, nil))
	root.AddCommand(workercmd.NewCmdWorker(f, nil))
	root.AddCommand(submitcmd.NewCmdSubmit(f, nil))
	root.AddCommand(batchcmd.NewCmdBatch(f, nil))
	root.AddCommand(servecmd.NewCmdServe(f, nil))
	root.AddCommand(userscmd.NewCmdUsers(f))
	root.AddCommand(healcmd.NewCmdHeal(f))
	return root
}
