package verifycmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/secret"
)

type verifyOptions struct {
	IO          *cmdutil.IOStreams
	Env         func(string) string
	Run         string
	DataDir     string
	SecretsFile string
	JSON        bool
}

func NewCmdVerify(f *cmdutil.Factory, runF func(context.Context, *verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:     "verify RUN|DIR",
		Short:   "Verify a run's evidence: hash chain, manifest, secrets, host paths",
		Long:    cmdutil.Help(helpVerify, false),
		Example: cmdutil.Help(helpVerify, true),
		Args:    cmdutil.ExactArgs(1, "one RUN id or bundle DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runVerify(opts)
		},
	}
	cmdutil.DataDirFlag(cmd, &opts.DataDir)
	cmd.Flags().StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values to look for (mode 0600)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	return cmd
}

func runVerify(o *verifyOptions) error {
	dir := o.Run
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = filepath.Join(launch.DataDir(o.DataDir, o.Env), "runs", o.Run)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return cmdutil.FlagErrorf("RUN %q: no such run under %s and no such directory", o.Run, filepath.Dir(dir))
		}
	}
	file, err := secret.NewStore(func(string) string { return "" }, o.SecretsFile)
	if err != nil {
		return err
	}
	rep := evidence.Verify(dir, append(secret.EnvValues(), file.Values()...))
	if o.JSON {
		err = cmdutil.WriteJSON(o.IO.Out, rep)
	} else {
		fmt.Fprintf(o.IO.Out, "%s  share_ready: %v  chain: %v  manifest: %v  events: %d\n", dir, rep.ShareReady, rep.ChainOK, rep.ManifestOK, rep.Events)
		for _, r := range rep.Reasons {
			fmt.Fprintln(o.IO.Out, "  "+r)
		}
	}
	if err == nil && !rep.ShareReady {
		return &cmdutil.ExitError{Code: 1}
	}
	return err
}
