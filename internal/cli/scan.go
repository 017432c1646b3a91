package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/redact"
)

// DefaultScanAllowFile lists path globs `cua secrets scan` skips.
const DefaultScanAllowFile = ".cua-scan-allow"

// maxScanFile is the largest file the scan reads; bigger ones are skipped.
const maxScanFile = 4 << 20

// scanKinds are the findings that fail a scan: key-shaped strings, PEM
// private keys and registered canaries.
var scanKinds = []redact.Kind{redact.KindKey, redact.KindPrivateKey, redact.KindLiteral}

type scanOptions struct {
	IO          *IOStreams
	Paths       []string
	SecretsFile string
	AllowFile   string
}

func newCmdSecrets(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "secrets", Short: "Check files for secrets"}
	cmd.AddCommand(newCmdSecretsScan(f, nil))
	return cmd
}

func newCmdSecretsScan(f *Factory, runF func(context.Context, *scanOptions) error) *cobra.Command {
	opts := &scanOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "scan [PATH...]",
		Short: "Fail on key-shaped strings and registered secrets in files",
		Long: `Scan files (default: the current directory, recursively) for key-shaped
strings (OpenAI/Anthropic sk-…, AWS AKIA…, GitHub ghp_…, Slack xox…-,
Stripe, PEM private keys) and for any registered canary: the CUA_SECRET_*
values in the environment at start and the values of --secrets FILE, also
when transformed (12-character fragments, any case or spacing).
Prints FILE:LINE and the kind of each finding, never the value; exits 1
when there is any. Skips .git, binary files, files over 4 MiB and paths
matching a glob in the allow file (default .cua-scan-allow: one glob per
line, '#' comments, "dir/**" for a whole tree; matched against the path
below each PATH).`,
		Example: "  cua secrets scan\n  cua secrets scan --secrets secrets.json internal e2e",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if len(opts.Paths) == 0 {
				opts.Paths = []string{"."}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSecretsScan(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.SecretsFile, "secrets", "", "JSON file of secret values to look for (mode 0600)")
	cmd.Flags().StringVar(&opts.AllowFile, "allow", DefaultScanAllowFile, "file of path globs to skip")
	return cmd
}

func runSecretsScan(ctx context.Context, o *scanOptions) error {
	canaries := registeredSecretValues()
	if o.SecretsFile != "" {
		m, err := loadSecretsFile(o.SecretsFile)
		if err != nil {
			return err
		}
		for _, v := range m {
			canaries = append(canaries, v)
		}
	}
	allow, err := readAllowFile(o.AllowFile, o.AllowFile != DefaultScanAllowFile)
	if err != nil {
		return err
	}
	red := redact.New(redact.WithLiterals(canaries...))
	var findings int
	for _, root := range o.Paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			// Globs are matched against the path below the scan root.
			rel := filepath.ToSlash(p)
			if r, err := filepath.Rel(root, p); err == nil && r != "." {
				rel = filepath.ToSlash(r)
			}
			if d.IsDir() {
				if d.Name() == ".git" || (p != root && allowed(allow, rel)) {
					return filepath.SkipDir
				}
				return nil
			}
			if allowed(allow, rel) || !d.Type().IsRegular() {
				return nil
			}
			data, err := capability.ReadBounded(p, maxScanFile)
			if errors.Is(err, capability.ErrTooLarge) || errors.Is(err, capability.ErrNotRegular) {
				return nil
			}
			if err != nil {
				return err
			}
			if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
				return nil // binary
			}
			for _, f := range red.Find(string(data)) {
				if !slices.Contains(scanKinds, f.Kind) {
					continue
				}
				findings++
				line := 1 + bytes.Count(data[:f.Start], []byte("\n"))
				fmt.Fprintf(o.IO.Out, "%s:%d: %s\n", filepath.ToSlash(p), line, f.Kind)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("secrets scan %s: %w", root, err)
		}
	}
	if findings > 0 {
		fmt.Fprintf(o.IO.ErrOut, "secrets scan: %d finding(s); remove them, or list a deliberate fixture in %s\n", findings, o.AllowFile)
		return &ExitError{Code: 1}
	}
	return nil
}

// readAllowFile reads path globs, one a line; a missing file is an empty
// list unless required.
func readAllowFile(name string, required bool) ([]string, error) {
	data, err := capability.ReadBounded(name, 1<<20)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--allow: %w", err)
	}
	var globs []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := path.Match(strings.TrimSuffix(line, "/**"), ""); err != nil {
			return nil, fmt.Errorf("--allow %s:%d: bad glob %q: %v", name, i+1, line, err)
		}
		globs = append(globs, line)
	}
	return globs, nil
}

// allowed reports whether the slash path p (with any leading "./" dropped)
// matches a glob; "dir/**" matches everything under dir.
func allowed(globs []string, p string) bool {
	p = strings.TrimPrefix(p, "./")
	for _, g := range globs {
		if prefix, ok := strings.CutSuffix(g, "/**"); ok {
			if ok, _ := path.Match(prefix, p); ok {
				return true
			}
			for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
				if ok, _ := path.Match(prefix, dir); ok {
					return true
				}
			}
			continue
		}
		if ok, _ := path.Match(g, p); ok {
			return true
		}
	}
	return false
}
