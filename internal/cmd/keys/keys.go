package keyscmd

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/launch"
)

type keysOptions struct {
	IO      *cmdutil.IOStreams
	Env     func(string) string
	DataDir string
	Force   bool
}

// NewCmdKeys is `cua keys init|export`.
func NewCmdKeys(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "keys",
		Short:   "The evidence signing key: create it, print its public half",
		Long:    cmdutil.Help(helpKeys, false),
		Example: cmdutil.Help(helpKeys, true),
	}
	cmd.AddCommand(newCmdInit(f, nil), newCmdExport(f, nil))
	return cmd
}

func newCmdInit(f *cmdutil.Factory, runF func(context.Context, *keysOptions) error) *cobra.Command {
	opts := &keysOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a new signing key to <data-dir>/keys/signing.key (0600)",
		Args:  cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runInit(opts)
		},
	}
	cmdutil.DataDirFlag(cmd, &opts.DataDir)
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing key (bundles it signed then verify only with its public key)")
	return cmd
}

func newCmdExport(f *cmdutil.Factory, runF func(context.Context, *keysOptions) error) *cobra.Command {
	opts := &keysOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print the public key (cua-ed25519:<base64>) runs are signed with",
		Args:  cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runExport(opts)
		},
	}
	cmdutil.DataDirFlag(cmd, &opts.DataDir)
	return cmd
}

func runInit(o *keysOptions) error {
	path, pub, err := signkey.Init(launch.DataDir(o.DataDir, o.Env), o.Force)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "wrote signing key %s (key %s); its public key:\n", path, signkey.ID(pub))
	fmt.Fprintln(o.IO.Out, signkey.FormatPublic(pub))
	return nil
}

func runExport(o *keysOptions) error {
	k, from, err := signkey.Load(launch.DataDir(o.DataDir, o.Env))
	if errors.Is(err, signkey.ErrNoKey) {
		return fmt.Errorf("no signing key: neither %s nor %s is set (run `cua keys init`)", signkey.EnvVar, from)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(o.IO.Out, signkey.FormatPublic(k.Public().(ed25519.PublicKey)))
	return nil
}
