package codegencmd

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/codegen"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/replay"
)

type codegenOptions struct {
	IO  *cmdutil.IOStreams
	Env func(string) string

	Ref         string
	Out         string
	CaseFlags   []string
	CasesFile   string
	FrameTitles []string
	LibraryDir  string
	Gen         codegen.Options // --base-url, --browser; cases, frames and library once validated
	Store       launch.StoreOptions
	loaded      *capability.Loaded
}

func NewCmdCodegen(f *cmdutil.Factory, runF func(context.Context, *codegenOptions) error) *cobra.Command {
	opts := &codegenOptions{IO: f.IO, Env: f.Getenv, Store: launch.StoreOptions{Getenv: f.Getenv}}
	cmd := &cobra.Command{
		Use:     "codegen FILE|ID[@VERSION] --out FILE.spec.ts",
		Short:   "Write a capability as a Playwright Test spec (role and label locators only)",
		Long:    cmdutil.Help(helpCodegen, false),
		Example: cmdutil.Help(helpCodegen, true),
		Args:    cmdutil.ExactArgs(1, "one capability FILE or catalog ID[@VERSION]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if err := opts.validate(cmd.Context()); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCodegen(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "out", "o", "", "the spec file to write (FILE.spec.ts)")
	fl.StringArrayVar(&opts.CaseFlags, "case", nil, "a case as NAME=VALUE,... with optional _name=TITLE and _expect=success|OUTCOME (repeatable)")
	fl.StringVar(&opts.CasesFile, "cases", "", "JSON file of cases: [{\"name\", \"inputs\": {NAME: VALUE}, \"expect\"}]")
	fl.StringArrayVar(&opts.FrameTitles, "frame-title", nil, "find the frame a scope names by its iframe title instead of its name, as NAME=TITLE (repeatable)")
	fl.StringVar(&opts.LibraryDir, "library", "", "directory of the capabilities its prerequisites name (default: its directory)")
	fl.StringVar(&opts.Gen.BaseURL, "base-url", codegen.DefaultBaseURL, "the spec's default base URL of the application")
	fl.StringVar(&opts.Gen.Browser, "browser", codegen.DefaultBrowser, "the Chromium executable the spec launches by default")
	cmdutil.StoreFlags(cmd, &opts.Store, true)
	return cmd
}

// validate checks every flag and loads the capability, its library and
// the cases before anything is generated.
func (o *codegenOptions) validate(ctx context.Context) error {
	if o.Out == "" {
		return cmdutil.FlagErrorf("--out is required: the spec file to write")
	}
	if !strings.HasSuffix(o.Out, ".ts") {
		return cmdutil.FlagErrorf("--out %q: want a TypeScript file (FILE.spec.ts)", o.Out)
	}
	if err := cmdutil.HTTPURL("--base-url", o.Gen.BaseURL); err != nil {
		return err
	}
	if len(o.CaseFlags) > 0 && o.CasesFile != "" {
		return cmdutil.FlagErrorf("--case and --cases: give one or the other")
	}
	for _, s := range o.CaseFlags {
		k, err := codegen.ParseCase(s)
		if err != nil {
			return cmdutil.FlagErrorf("%v", err)
		}
		o.Gen.Cases = append(o.Gen.Cases, k)
	}
	if o.CasesFile != "" {
		cs, err := codegen.LoadCases(o.CasesFile)
		if err != nil {
			return cmdutil.FlagErrorf("--cases %v", err)
		}
		o.Gen.Cases = cs
	}
	titles, err := cmdutil.PairsFlag("--frame-title", o.FrameTitles)
	if err != nil {
		return err
	}
	o.Gen.FrameTitles = titles
	o.Gen.BrowserArgs = launch.BrowserFlags()
	return o.load(ctx)
}

// load loads a capability file and the library beside it, or resolves a
// reference and its prerequisites from the catalog.
func (o *codegenOptions) load(ctx context.Context) error {
	o.Store.DataDir = launch.DataDir(o.Store.DataDir, o.Env)
	if catalog.IsFile(o.Ref) {
		l, err := capability.LoadContext(ctx, o.Ref)
		if err != nil {
			return err
		}
		if !l.Sealed {
			return fmt.Errorf("%s is a draft: seal it (cua capability seal) before generating a test of it", o.Ref)
		}
		if len(l.Capability.Prerequisites) > 0 {
			dir := o.LibraryDir
			if dir == "" {
				dir = filepath.Dir(o.Ref)
			}
			lib, err := replay.LoadDir(dir)
			if err != nil {
				return fmt.Errorf("--library %w", err)
			}
			o.Gen.Library = lib
		}
		o.loaded = l
		return nil
	}
	cat, st, err := cmdutil.OpenCatalog(ctx, o.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	l, _, err := cat.Resolve(ctx, o.Ref)
	if err != nil {
		return err
	}
	o.loaded = l
	o.Gen.Library = &resolved{lib: cat.Library(ctx), got: map[string]*capability.Loaded{}}
	return o.prefetch(l, 0)
}

// resolved holds the prerequisites read from the catalog before its store
// closes.
type resolved struct {
	lib interface {
		Lookup(string) (*capability.Loaded, error)
	}
	got map[string]*capability.Loaded
}

func (r *resolved) Lookup(ref string) (*capability.Loaded, error) {
	if l, ok := r.got[ref]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("capability %s is not in the catalog", ref)
}

func (o *codegenOptions) prefetch(l *capability.Loaded, depth int) error {
	r := o.Gen.Library.(*resolved)
	for _, p := range l.Capability.Prerequisites {
		if _, ok := r.got[p.Capability]; ok || depth > 3 {
			continue
		}
		sub, err := r.lib.Lookup(p.Capability)
		if err != nil {
			return fmt.Errorf("prerequisite %s: %w", p.Capability, err)
		}
		r.got[p.Capability] = sub
		if err := o.prefetch(sub, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func runCodegen(o *codegenOptions) error {
	spec, err := codegen.Generate(o.loaded, o.Gen)
	if err != nil {
		return err
	}
	if err := codegen.WriteFile(o.Out, spec); err != nil {
		return err
	}
	cases := len(o.Gen.Cases)
	if cases == 0 {
		cases = 1
	}
	// Effects are never hidden: one line per gated, elevated or
	// irreversible step says what the spec does with it and which
	// variable releases it.
	for _, g := range codegen.Guards(o.loaded, o.Gen.Library) {
		fmt.Fprintf(o.IO.ErrOut, "codegen: %s\n", g.Notice())
	}
	fmt.Fprintf(o.IO.Out, "wrote %s: %s, %d case(s), %d bytes\n", o.Out, o.loaded.Capability.Ref(), cases, len(spec))
	fmt.Fprintln(o.IO.Out, codegen.RunHint(o.Out, o.Gen.BaseURL, codegen.Secrets(o.loaded, o.Gen.Library)))
	return nil
}
