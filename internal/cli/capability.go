package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/replay"
)

func newCmdCapability(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "capability",
		Short: "Validate, hash and seal capability files",
	}
	cmd.AddCommand(newCmdCapabilityValidate(f, nil))
	cmd.AddCommand(newCmdCapabilityHash(f, nil))
	cmd.AddCommand(newCmdCapabilitySeal(f, nil))
	return cmd
}

type capValidateOptions struct {
	IO    *IOStreams
	Files []string
	JSON  bool
}

type fileResult struct {
	File        string               `json:"file"`
	Valid       bool                 `json:"valid"`
	ID          string               `json:"id,omitempty"`
	Version     string               `json:"version,omitempty"`
	ContentHash string               `json:"content_hash,omitempty"`
	Sealed      bool                 `json:"sealed"`
	Error       string               `json:"error,omitempty"`
	Problems    []capability.Problem `json:"problems,omitempty"`
}

func newCmdCapabilityValidate(f *Factory, runF func(*capValidateOptions) error) *cobra.Command {
	opts := &capValidateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Validate capability files against the schema, the semantic rules and their content hash",
		Long: heredoc.Doc(`
			Validate each capability file: JSON Schema, semantic checks (unique ids,
			declared inputs, output sources, regular expressions) and, for a sealed
			file, its content hash. Every problem names the file, the line and the
			field path. Exits 1 if any file is invalid.
		`),
		Example: heredoc.Doc(`
			$ cua capability validate examples/capabilities/*.yaml
			$ cua capability validate --json draft.yaml
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return flagErrorf("expected at least one FILE")
			}
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return runCapabilityValidate(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print results as JSON")
	return cmd
}

func loadResult(file string) fileResult {
	r := fileResult{File: file}
	l, err := capability.Load(file)
	if err != nil {
		r.Error = err.Error()
		var inv *capability.InvalidError
		if errors.As(err, &inv) {
			r.Problems = inv.Problems
		}
		var mm *capability.HashMismatchError
		if errors.As(err, &mm) {
			r.Sealed, r.ContentHash = true, mm.Computed
			r.Problems = []capability.Problem{{File: file, Path: "content_hash", Message: fmt.Sprintf("content hash mismatch for %s: declared %s, computed %s", mm.Ref, mm.Declared, mm.Computed)}}
		}
		return r
	}
	r.Valid = true
	r.ID, r.Version, r.ContentHash, r.Sealed = l.Capability.ID, l.Capability.Version, l.Hash, l.Sealed
	return r
}

func runCapabilityValidate(opts *capValidateOptions) error {
	results := make([]fileResult, 0, len(opts.Files))
	bad := 0
	for _, file := range opts.Files {
		r := loadResult(file)
		if !r.Valid {
			bad++
		}
		results = append(results, r)
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, map[string]any{"schema_version": JSONSchemaVersion, "results": results}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.Valid {
				state := "draft (unsealed)"
				if r.Sealed {
					state = "sealed " + r.ContentHash
				}
				fmt.Fprintf(opts.IO.Out, "ok   %s  %s@%s  %s\n", r.File, r.ID, r.Version, state)
				continue
			}
			fmt.Fprintf(opts.IO.ErrOut, "FAIL %s\n", r.Error)
		}
	}
	if bad > 0 {
		return &silentError{err: fmt.Errorf("%d of %d capability files invalid", bad, len(opts.Files))}
	}
	return nil
}

type capHashOptions struct {
	IO   *IOStreams
	File string
	JSON bool
}

func newCmdCapabilityHash(f *Factory, runF func(*capHashOptions) error) *cobra.Command {
	opts := &capHashOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "hash FILE",
		Short: "Print the content hash of a capability file",
		Long: heredoc.Doc(`
			Print "sha256:" and the hex SHA-256 of the RFC 8785 canonical JSON of the
			capability with defaults applied and without content_hash. The hash does
			not depend on YAML layout, comments or key order. A sealed file whose
			declared hash differs is refused.
		`),
		Example: "$ cua capability hash examples/capabilities/memberdesk.savings_balance.yaml",
		Args:    exactArgs(1, "one FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runCapabilityHash(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func runCapabilityHash(opts *capHashOptions) error {
	l, err := capability.Load(opts.File)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, map[string]any{
			"schema_version": JSONSchemaVersion, "file": opts.File,
			"capability": l.Capability.Ref(), "content_hash": l.Hash, "sealed": l.Sealed,
		})
	}
	_, err = fmt.Fprintln(opts.IO.Out, l.Hash)
	return err
}

type capSealOptions struct {
	IO      *IOStreams
	File    string
	JSON    bool
	Library string
}

func newCmdCapabilitySeal(f *Factory, runF func(*capSealOptions) error) *cobra.Command {
	opts := &capSealOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "seal FILE",
		Short: "Write the content hash into a draft capability, atomically",
		Long: heredoc.Doc(`
			Validate the draft, compute its content hash and write content_hash into
			the file in place (temp file and rename), keeping comments and layout.
			Sealing a sealed file with a matching hash changes nothing; a sealed file
			whose content changed is refused: id@version is frozen, so bump the
			version and remove content_hash first.
		`),
		Example: "$ cua capability seal my.capability.yaml",
		Args:    exactArgs(1, "one FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runCapabilitySeal(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	cmd.Flags().StringVar(&opts.Library, "library", "", "directory of the capabilities this one calls, whose content hashes are pinned (default: the file's directory)")
	return cmd
}

func runCapabilitySeal(opts *capSealOptions) error {
	dir := opts.Library
	if dir == "" {
		dir = filepath.Dir(opts.File)
	}
	resolve := func(ref string) (*capability.Loaded, error) {
		lib, err := replay.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		l, err := lib.Lookup(ref)
		if err != nil {
			return nil, fmt.Errorf("%w (library %s)", err, dir)
		}
		return l, nil
	}
	h, err := capability.SealPinned(opts.File, resolve)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, map[string]any{"schema_version": JSONSchemaVersion, "file": opts.File, "content_hash": h})
	}
	_, err = fmt.Fprintf(opts.IO.Out, "sealed %s %s\n", opts.File, h)
	return err
}
