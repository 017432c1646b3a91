package verifycmd

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/evidence/signkey"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/secret"
	"github.com/cuahq/cua/internal/store"
)

type verifyOptions struct {
	IO          *cmdutil.IOStreams
	Env         func(string) string
	Run         string
	DataDir     string
	SecretsFile string
	JSON        bool
	// Key is --key: a public key's text form or a file holding it.
	Key string
	// DB is --db: the store whose run row anchors the bundle.
	DB string
	// Evidence is --evidence: the evidence store RUN is fetched from.
	Evidence string
}

func NewCmdVerify(f *cmdutil.Factory, runF func(context.Context, *verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:     "verify RUN|DIR [--evidence URL]",
		Short:   "Verify a run's evidence: signature, chain head, hash chain, manifest, secrets, host paths",
		Long:    cmdutil.Help(helpVerify, false),
		Example: cmdutil.Help(helpVerify, true),
		Args:    cmdutil.ExactArgs(1, "one RUN id or bundle DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runVerify(cmd.Context(), opts)
		},
	}
	cmdutil.DataDirFlag(cmd, &opts.DataDir)
	cmd.Flags().StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values to look for (mode 0600)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&opts.Key, "key", "", "the public key (cua-ed25519:<base64>, as cua keys export prints it, or a file holding it) the bundle must be signed with; default the deployment key")
	cmd.Flags().StringVar(&opts.Evidence, "evidence", "", "verify RUN from this "+cmdutil.EvidenceUsage)
	cmd.Flags().StringVar(&opts.DB, "db", "", "PostgreSQL URL of the store whose run row keeps the chain head (default $CUA_DB, else SQLite at <data-dir>/cua.db when it exists)")
	return cmd
}

func runVerify(ctx context.Context, o *verifyOptions) error {
	dir := o.Run
	if o.Evidence != "" {
		fetched, cleanup, err := fetchRun(ctx, o)
		if err != nil {
			return err
		}
		defer cleanup()
		dir = fetched
	} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = filepath.Join(launch.DataDir(o.DataDir, o.Env), "runs", o.Run)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return cmdutil.FlagErrorf("RUN %q: no such run under %s and no such directory", o.Run, filepath.Dir(dir))
		}
	}
	file, err := secret.NewStore(func(string) string { return "" }, o.SecretsFile)
	if err != nil {
		return err
	}
	vo := evidence.VerifyOptions{Canaries: append(secret.EnvValues(), file.Values()...), RequireSignature: true}
	if vo.Key, err = trustedKey(o); err != nil {
		return err
	}
	if err := anchorOf(ctx, o, filepath.Base(dir), &vo); err != nil {
		return err
	}
	rep := evidence.VerifyWith(dir, vo)
	if o.JSON {
		err = cmdutil.WriteJSON(o.IO.Out, rep)
	} else {
		shown := dir
		if o.Evidence != "" {
			shown = o.Run + " (" + o.Evidence + ")"
		}
		fmt.Fprintf(o.IO.Out, "%s  share_ready: %v  chain: %v  manifest: %v  events: %d  signature: %s  head: %s\n",
			shown, rep.ShareReady, rep.ChainOK, rep.ManifestOK, rep.Events, rep.Signature, rep.Head)
		if rep.Evidence != nil {
			fmt.Fprintln(o.IO.Out, "  "+rep.Evidence.String())
		}
		for _, r := range rep.Reasons {
			fmt.Fprintln(o.IO.Out, "  "+r)
		}
	}
	if err == nil && !rep.ShareReady {
		return &cmdutil.ExitError{Code: 1}
	}
	return err
}

// fetchRun downloads RUN from the --evidence store into a private temp
// directory (bounded: see evstore.Fetch); cleanup removes it. A file://
// store's run is read where it is.
func fetchRun(ctx context.Context, o *verifyOptions) (string, func(), error) {
	if !runIDPattern.MatchString(o.Run) {
		return "", nil, cmdutil.FlagErrorf("RUN %q: not a run id (with --evidence, RUN names a run in the store)", o.Run)
	}
	st, err := cmdutil.OpenEvidence(ctx, o.Evidence, launch.DataDir(o.DataDir, o.Env))
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	tmp, err := os.MkdirTemp("", "cua-verify-*")
	if err != nil {
		return "", nil, fmt.Errorf("verify: temp dir: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	dir, err := st.Fetch(ctx, o.Run, tmp)
	if err != nil {
		cleanup()
		return "", nil, cmdutil.FlagErrorf("RUN %q: %v", o.Run, err)
	}
	return dir, cleanup, nil
}

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// trustedKey is --key, else the public half of the deployment key (nil
// when there is none: a signed bundle is then not checked).
func trustedKey(o *verifyOptions) (ed25519.PublicKey, error) {
	if o.Key != "" {
		k, err := signkey.ReadPublic(o.Key)
		if err != nil {
			return nil, cmdutil.FlagErrorf("--key: %v", err)
		}
		return k, nil
	}
	k, _, err := signkey.Load(launch.DataDir(o.DataDir, o.Env))
	if errors.Is(err, signkey.ErrNoKey) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return k.Public().(ed25519.PublicKey), nil
}

// anchorOf reads run id's anchor from the store --db (or $CUA_DB) names,
// else from the data directory's SQLite store when it exists. A run that a
// named store does not hold is a reason; one the default store does not
// hold is left unchecked (a run from a file is not indexed).
func anchorOf(ctx context.Context, o *verifyOptions, id string, vo *evidence.VerifyOptions) error {
	so := launch.StoreOptions{DB: o.DB, DataDir: o.DataDir, Getenv: o.Env}
	named := o.DB != "" || o.Env("CUA_DB") != ""
	if !named {
		if _, err := os.Stat(filepath.Join(launch.DataDir(o.DataDir, o.Env), "cua.db")); err != nil {
			return nil
		}
	}
	_, st, err := cmdutil.OpenCatalog(ctx, so)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := st.GetRun(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		vo.NotInStore = named
		return nil
	case err != nil:
		return err
	}
	vo.Anchor = &evidence.Anchor{ChainHead: r.ChainHead, Signature: r.Signature}
	return nil
}
