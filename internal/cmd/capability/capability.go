package capabilitycmd

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/cmdutil"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/report"
)

func NewCmdCapability(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "capability",
		Short: "Validate, lint, hash and seal capability files",
	}
	cmd.AddCommand(NewCmdCapabilityValidate(f, nil))
	cmd.AddCommand(NewCmdCapabilityLint(f, nil))
	cmd.AddCommand(NewCmdCapabilityHash(f, nil))
	cmd.AddCommand(NewCmdCapabilitySeal(f, nil))
	return cmd
}

// capOptions are the options of every capability subcommand.
type capOptions struct {
	IO      *cmdutil.IOStreams
	Files   []string
	JSON    bool
	Library string
	ctx     context.Context
}

// newCapCmd builds a capability subcommand that takes files and --json.
func newCapCmd(opts *capOptions, cmd *cobra.Command, run, runF func(*capOptions) error) *cobra.Command {
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmdutil.FlagErrorf("expected at least one FILE")
		}
		opts.Files, opts.ctx = args, c.Context()
		if runF != nil {
			return runF(opts)
		}
		return run(opts)
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func NewCmdCapabilityValidate(f *cmdutil.Factory, runF func(*capOptions) error) *cobra.Command {
	cmd := newCapCmd(&capOptions{IO: f.IO}, &cobra.Command{
		Use:     "validate FILE...",
		Short:   "Validate capability files against the schema, the semantic rules and their content hash",
		Long:    cmdutil.Help(helpValidate, false),
		Example: cmdutil.Help(helpValidate, true),
	}, runCapabilityValidate, runF)
	cmd.Flags().Lookup("json").Usage = "print results as JSON"
	return cmd
}

func runCapabilityValidate(opts *capOptions) error {
	results := make([]report.FileCheck, 0, len(opts.Files))
	bad := 0
	for _, file := range opts.Files {
		if err := opts.ctx.Err(); err != nil {
			return err
		}
		r := report.Check(opts.ctx, file)
		if !r.Valid {
			bad++
		}
		results = append(results, r)
		switch {
		case opts.JSON:
		case r.Valid:
			fmt.Fprintln(opts.IO.Out, r.Line())
		default:
			fmt.Fprintln(opts.IO.ErrOut, r.Line())
		}
	}
	if opts.JSON {
		if err := cmdutil.WriteJSON(opts.IO.Out, map[string]any{"schema_version": cmdutil.JSONSchemaVersion, "results": results}); err != nil {
			return err
		}
	}
	if bad > 0 {
		return &cmdutil.SilentError{Err: fmt.Errorf("%d of %d capability files invalid", bad, len(opts.Files))}
	}
	return nil
}

func NewCmdCapabilityLint(f *cmdutil.Factory, runF func(*capOptions) error) *cobra.Command {
	cmd := newCapCmd(&capOptions{IO: f.IO}, &cobra.Command{
		Use:     "lint FILE...",
		Short:   "Validate capability files and report what an approver should not accept, such as a read with no identity check",
		Long:    cmdutil.Help(helpLint, false),
		Example: cmdutil.Help(helpLint, true),
	}, runCapabilityLint, runF)
	cmd.Flags().Lookup("json").Usage = "print results as JSON"
	return cmd
}

func runCapabilityLint(opts *capOptions) error {
	results := make([]report.FileCheck, 0, len(opts.Files))
	bad := 0
	for _, file := range opts.Files {
		if err := opts.ctx.Err(); err != nil {
			return err
		}
		r := report.Check(opts.ctx, file)
		ok := r.Valid && len(r.Lint) == 0
		if !ok {
			bad++
		}
		results = append(results, r)
		if opts.JSON {
			continue
		}
		w := opts.IO.Out
		if !ok {
			w = opts.IO.ErrOut
		}
		for _, line := range r.LintLines() {
			fmt.Fprintln(w, line)
		}
	}
	if opts.JSON {
		if err := cmdutil.WriteJSON(opts.IO.Out, map[string]any{"schema_version": cmdutil.JSONSchemaVersion, "results": results}); err != nil {
			return err
		}
	}
	if bad > 0 {
		return &cmdutil.SilentError{Err: fmt.Errorf("%d of %d capability files invalid or with lint problems", bad, len(opts.Files))}
	}
	return nil
}

func NewCmdCapabilityHash(f *cmdutil.Factory, runF func(*capOptions) error) *cobra.Command {
	return newCapCmd(&capOptions{IO: f.IO}, &cobra.Command{
		Use:     "hash FILE",
		Short:   "Print the content hash of a capability file",
		Long:    cmdutil.Help(helpHash, false),
		Example: cmdutil.Help(helpHash, true),
		Args:    cmdutil.ExactArgs(1, "one FILE"),
	}, runCapabilityHash, runF)
}

func runCapabilityHash(opts *capOptions) error {
	l, err := capability.LoadContext(opts.ctx, opts.Files[0])
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, map[string]any{
			"schema_version": cmdutil.JSONSchemaVersion, "file": opts.Files[0],
			"capability": l.Capability.Ref(), "content_hash": l.Hash, "sealed": l.Sealed,
		})
	}
	_, err = fmt.Fprintln(opts.IO.Out, l.Hash)
	return err
}

func NewCmdCapabilitySeal(f *cmdutil.Factory, runF func(*capOptions) error) *cobra.Command {
	opts := &capOptions{IO: f.IO}
	cmd := newCapCmd(opts, &cobra.Command{
		Use:     "seal FILE",
		Short:   "Write the content hash into a draft capability, atomically",
		Long:    cmdutil.Help(helpSeal, false),
		Example: cmdutil.Help(helpSeal, true),
		Args:    cmdutil.ExactArgs(1, "one FILE"),
	}, runCapabilitySeal, runF)
	cmd.Flags().StringVar(&opts.Library, "library", "", "directory of the capabilities this one calls, whose content hashes are pinned (default: the file's directory)")
	return cmd
}

func runCapabilitySeal(opts *capOptions) error {
	file, dir := opts.Files[0], opts.Library
	if dir == "" {
		dir = filepath.Dir(file)
	}
	h, err := pipeline.SealPinned(file, dir)
	if err != nil {
		return err
	}
	if opts.JSON {
		return cmdutil.WriteJSON(opts.IO.Out, map[string]any{"schema_version": cmdutil.JSONSchemaVersion, "file": file, "content_hash": h})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "sealed %s %s\n", file, h)
	return err
}
