package recordcmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	consolecmd "github.com/cuahq/cua/internal/cmd/console"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/console"
	"github.com/cuahq/cua/internal/hitl/hitlstore"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/record"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/secret"
	"github.com/cuahq/cua/internal/store"
)

// DefaultListen is where the recording page listens unless --listen.
const DefaultListen = "127.0.0.1:8813"

type recordOptions struct {
	IO  *cmdutil.IOStreams
	Env func(string) string

	Goal, Target, Out, ID, Version string
	Listen, SecretsFile            string
	InputPairs, SecretPairs        []string
	Launch                         launch.Options
	Where                          surfaceOptions // --surface, --launch, --display
	Store                          launch.StoreOptions
	JSON, NoEval                   bool

	inputs, secrets map[string]string
	secretStore     *secret.Store
	// onStart, in tests, is told the session once its page is served.
	onStart func(*record.Session)
}

// NewCmdRecord builds `cua record`.
func NewCmdRecord(f *cmdutil.Factory, runF func(context.Context, *recordOptions) error) *cobra.Command {
	opts := &recordOptions{IO: f.IO, Env: f.Getenv, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{
		Use:     "record",
		Short:   "Record a workflow a person shows once, compile it into a capability, and replay it",
		Long:    cmdutil.Help(helpRecord, false),
		Example: cmdutil.Help(helpRecord, true),
		Args:    cmdutil.ExactArgs(0, "no arguments (use --goal)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRecord(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Goal, "goal", "", "what the workflow does, in words (required)")
	fl.StringVar(&opts.Target, "target", "", "base URL of the application (required)")
	fl.StringVar(&opts.Out, "out", "", "directory to write the compiled capability to (required)")
	fl.StringArrayVar(&opts.InputPairs, "input", nil, "a value you will type that is an input: NAME=VALUE (repeatable)")
	fl.StringArrayVar(&opts.SecretPairs, "secret", nil, "a field whose typed value is a secret: FIELD=REF, FIELD its accessible name (repeatable)")
	fl.StringVar(&opts.Listen, "listen", DefaultListen, "loopback address of the recording page")
	fl.StringVar(&opts.ID, "id", "", "id of the compiled capability (default derived from the goal)")
	fl.StringVar(&opts.Version, "version", "", "version of the compiled capability (default 1.0.0)")
	fl.StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values for the eval replay (mode 0600); CUA_SECRET_<REF> works too")
	fl.StringVar(&opts.Launch.Browser, "browser", "", "Chromium executable")
	fl.BoolVar(&opts.Launch.Headful, "headful", false, "show the application's browser window too")
	opts.Where.flags(cmd, &opts.Launch)
	fl.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	fl.BoolVar(&opts.NoEval, "no-eval", false, "skip the eval replay")
	cmdutil.StoreFlags(cmd, &opts.Store, true)
	return cmd
}

var (
	nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	idRE   = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	verRE  = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
)

func (o *recordOptions) validate() error {
	switch {
	case strings.TrimSpace(o.Goal) == "":
		return cmdutil.FlagErrorf("--goal is required")
	case o.Target == "":
		return cmdutil.FlagErrorf("--target is required")
	case o.Out == "":
		return cmdutil.FlagErrorf("--out is required")
	case o.ID != "" && !idRE.MatchString(o.ID):
		return cmdutil.FlagErrorf("--id %q: want a namespaced snake_case id (memberdesk.lookup)", o.ID)
	case o.Version != "" && !verRE.MatchString(o.Version):
		return cmdutil.FlagErrorf("--version %q: want MAJOR.MINOR.PATCH", o.Version)
	}
	if err := cmdutil.HTTPURL("--target", o.Target); err != nil {
		return err
	}
	if err := o.Where.validate(&o.Launch, o.Env); err != nil {
		return err
	}
	if err := console.CheckAddr(o.Listen, false, false); err != nil {
		return cmdutil.FlagErrorf("--listen: %v", err)
	}
	if st, err := os.Stat(o.Out); err == nil && !st.IsDir() {
		return cmdutil.FlagErrorf("--out %s: not a directory", o.Out)
	}
	var err error
	if o.inputs, err = cmdutil.PairsFlag("--input", o.InputPairs); err != nil {
		return err
	}
	seen := map[string]string{}
	for name, v := range o.inputs {
		if !nameRE.MatchString(name) {
			return cmdutil.FlagErrorf("--input %s: the name must be snake_case (a-z, 0-9, _)", name)
		}
		if v == "" {
			return cmdutil.FlagErrorf("--input %s: the value is empty", name)
		}
		if other, dup := seen[v]; dup {
			return cmdutil.FlagErrorf("--input %s and %s have the same value: a typed value must name one input", other, name)
		}
		seen[v] = name
	}
	if o.secrets, err = cmdutil.PairsFlag("--secret", o.SecretPairs); err != nil {
		return err
	}
	for field, ref := range o.secrets {
		if !nameRE.MatchString(ref) {
			return cmdutil.FlagErrorf("--secret %s=%s: the ref must be snake_case (a-z, 0-9, _)", field, ref)
		}
	}
	if o.secretStore, err = secret.NewStore(o.Env, o.SecretsFile); err != nil {
		return cmdutil.FlagErrorf("%v", err)
	}
	o.Store.DataDir = launch.DataDir(o.Store.DataDir, o.Env)
	return nil
}

func runRecord(ctx context.Context, o *recordOptions) error {
	_, st, err := cmdutil.OpenCatalog(ctx, o.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	red := redact.New()
	logger := cmdutil.NewLogger(o.IO.ErrOut, red)
	lo := o.Launch
	lo.Kind, lo.BaseURL, lo.Logger = o.Where.kind(), o.Target, logger
	l := launch.New(lo)
	defer l.Close()
	sess, err := record.Start(ctx, sessionOptions(o, st, l, red))
	if err != nil {
		return err
	}
	defer sess.Close()
	fmt.Fprintf(o.IO.ErrOut, "record: %s (sign in with a principal token: cua users add NAME --role operator)\n", sess.URL())
	if o.onStart != nil {
		o.onStart(sess)
	}
	res, err := sess.Wait(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		err = cmdutil.WriteJSON(o.IO.Out, struct {
			SchemaVersion int `json:"schema_version"`
			*record.Result
		}{cmdutil.JSONSchemaVersion, res})
	} else {
		printResult(o.IO.Out, res)
	}
	if code := res.ExitCode(); err == nil && code != 0 && !o.NoEval {
		return &cmdutil.ExitError{Code: code}
	}
	return err
}

// sessionOptions wires the session: the console's sign-in over st's
// principals, its queue row in st, sessions from l.
func sessionOptions(o *recordOptions, st store.Store, l *launch.Launcher, red *redact.Redactor) record.Options {
	logger := cmdutil.NewLogger(o.IO.ErrOut, red)
	return record.Options{Goal: o.Goal, BaseURL: o.Target, Kind: o.Where.kind(), Inputs: o.inputs, Secrets: o.secrets,
		Addr: o.Listen, Auth: consolecmd.Authenticator(st), Queue: hitlstore.New(st), Open: l.Open, Redactor: red,
		Logger: logger, Compile: record.CompileOptions{ID: o.ID, Version: o.Version, Out: o.Out, DataDir: o.Store.DataDir,
			Now: time.Now, Eval: !o.NoEval, Secrets: o.secretStore, NewRunID: pipeline.NewRunID}}
}

// printResult writes the sealed file, its review notes and each eval.
func printResult(w io.Writer, r *record.Result) {
	fmt.Fprintf(w, "capability: %s\nfile: %s\ncontent_hash: %s\n", r.Capability, r.File, r.ContentHash)
	if len(r.ReviewNotes) > 0 {
		fmt.Fprintln(w, "review notes:")
		for _, n := range r.ReviewNotes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	if r.Eval != nil {
		fmt.Fprintf(w, "eval: %s%s%s\n", r.Eval.Status, suffix(" outcome ", r.Eval.Outcome), suffix(" ", string(r.Eval.FailureCode)))
		for _, k := range slices.Sorted(maps.Keys(r.Eval.Outputs)) {
			fmt.Fprintf(w, "  %s = %v\n", k, r.Eval.Outputs[k])
		}
	}
	for _, b := range r.Branches {
		got := "not run"
		if b.Eval != nil {
			got = string(b.Eval.Status) + suffix(" outcome ", b.Eval.Outcome) + suffix(" ", string(b.Eval.FailureCode))
		}
		fmt.Fprintf(w, "eval of the branch ending in %s: %s\n", b.Want, got)
	}
}

func suffix(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}
