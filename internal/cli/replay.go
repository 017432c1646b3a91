package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/launch"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/report"
	"github.com/cuahq/cua/internal/secret"
)

type replayOptions struct {
	IO  *IOStreams
	Env func(string) string

	File              string
	Inputs            []string
	BaseURL           string
	AllowIrreversible bool
	ApprovalFile      string
	ReleaseGates      []string
	Headful           bool
	JSON              bool
	DataDir           string
	Browser           string
	CDPURL            string
	SecretsFile       string
	LibraryDir        string

	// Set by validate.
	loaded   *capability.Loaded
	inputs   map[string]string
	approval *policy.Approval
	secrets  *secret.Store
}

func newCmdReplay(f *Factory, runF func(context.Context, *replayOptions) error) *cobra.Command {
	opts := &replayOptions{IO: f.IO, Env: f.Getenv}
	cmd := &cobra.Command{
		Use:     "replay CAPABILITY",
		Short:   "Replay a sealed capability in Chromium, with no model in the loop",
		Long:    help("replay", false),
		Example: help("replay", true),
		Args:    exactArgs(1, "one CAPABILITY file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runReplay(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Inputs, "input", "i", nil, "input as NAME=VALUE (repeatable)")
	fl.StringVar(&opts.BaseURL, "base-url", "http://127.0.0.1:8811", "base URL of the application")
	fl.BoolVar(&opts.AllowIrreversible, "allow-irreversible", false, "allow irreversible actions (an approval of this exact content is also required)")
	fl.StringVar(&opts.ApprovalFile, "approval", "", "approval record (JSON) for irreversible actions")
	fl.StringArrayVar(&opts.ReleaseGates, "release-gate", nil, "release the gate before step ID (repeatable)")
	fl.BoolVar(&opts.Headful, "headful", false, "show the browser window")
	fl.BoolVar(&opts.JSON, "json", false, "print the run record as JSON")
	fl.StringVar(&opts.DataDir, "data-dir", "", "data directory (default $CUA_DATA_DIR or .cua)")
	fl.StringVar(&opts.Browser, "browser", "", "Chromium executable (default $CUA_BROWSER or /usr/bin/chromium)")
	fl.StringVar(&opts.CDPURL, "cdp-url", "", "attach to a running browser's DevTools endpoint instead of launching one")
	fl.StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values (mode 0600)")
	fl.StringVar(&opts.LibraryDir, "library", "", "directory of capabilities this one may call (default: its directory)")
	return cmd
}

// validate checks every flag and loads every file before a browser starts.
func (o *replayOptions) validate() error {
	l, err := capability.Load(o.File)
	if err != nil {
		return err
	}
	if !l.Sealed {
		return fmt.Errorf("%s is a draft: seal it (cua capability seal) before replaying", o.File)
	}
	o.loaded = l
	o.inputs = map[string]string{}
	for _, kv := range o.Inputs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return flagErrorf("--input %q: want NAME=VALUE", kv)
		}
		if _, dup := o.inputs[k]; dup {
			return flagErrorf("--input %s given twice", k)
		}
		o.inputs[k] = v
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return flagErrorf("--base-url %q: want an http(s) URL", o.BaseURL)
	}
	o.DataDir = dataDir(o.DataDir, o.Env)
	if o.LibraryDir == "" {
		o.LibraryDir = filepath.Dir(o.File)
	}
	if o.ApprovalFile != "" {
		raw, err := capability.ReadBounded(o.ApprovalFile, capability.MaxApprovalSize)
		if err != nil {
			return fmt.Errorf("--approval: %w", err)
		}
		var ap policy.Approval
		if err := json.Unmarshal(raw, &ap); err != nil || ap.ContentHash == "" {
			return fmt.Errorf("--approval %s: want a JSON approval record with content_hash", o.ApprovalFile)
		}
		o.approval = &ap
	}
	for _, g := range o.ReleaseGates {
		if st := l.Capability.Step(g); st == nil || !st.Gate {
			return flagErrorf("--release-gate %q: no gated step with that id", g)
		}
	}
	o.secrets, err = secret.NewStore(o.Env, o.SecretsFile)
	return err
}

func runReplay(ctx context.Context, o *replayOptions) error {
	red := redact.New()
	logger := newLogger(o.IO.ErrOut, red)
	c := o.loaded.Capability
	l := launch.New(launch.Options{Kind: c.Surface, BaseURL: o.BaseURL, AllowedDomains: c.Policy.AllowedDomains,
		Browser: o.Browser, CDPURL: o.CDPURL, Headful: o.Headful, Logger: logger})
	defer l.Close()
	rec, err := pipeline.Replay(ctx, pipeline.ReplayParams{LibraryDir: o.LibraryDir, Open: l.Open, Run: replay.Options{
		Capability: o.loaded, Inputs: o.inputs, BaseURL: o.BaseURL, Secrets: o.secrets, Redactor: red, DataDir: o.DataDir,
		AllowIrreversible: o.AllowIrreversible, Approval: o.approval, ReleasedGates: o.ReleaseGates,
		RunID: pipeline.NewRunID(), Logger: logger,
	}})
	if err != nil {
		return err
	}
	return reportRun(o.IO.Out, rec, o.JSON)
}

func reportRun(w io.Writer, rec *domain.RunRecord, asJSON bool) error {
	if asJSON {
		if err := writeJSON(w, rec); err != nil {
			return err
		}
	} else {
		report.Summary(w, rec)
	}
	if rec.ExitCode != 0 {
		return &ExitError{Code: rec.ExitCode}
	}
	return nil
}
