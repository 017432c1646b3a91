package secret

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

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/redact"
)

// DefaultAllowFile lists path globs a scan skips.
const DefaultAllowFile = ".cua-scan-allow"

// maxScanFile is the largest file a scan reads; bigger ones are skipped.
const maxScanFile = 4 << 20

// scanKinds are the findings that fail a scan: key-shaped strings, PEM
// private keys and registered canaries.
var scanKinds = []redact.Kind{redact.KindKey, redact.KindPrivateKey, redact.KindLiteral}

// Finding is one secret found: where, and what kind, never the value.
type Finding struct {
	// Path is the file's path, slash-separated, as reached from its root.
	Path string
	Line int
	Kind redact.Kind
}

// ScanOptions is one scan.
type ScanOptions struct {
	// Roots are the files and directories to scan, recursively.
	Roots []string
	// Canaries are secret values to find, also transformed (fragments,
	// case, spacing; see redact.WithLiterals).
	Canaries []string
	// Allow are path globs to skip (see [Allowed]).
	Allow []string
}

// Scan reports, in walk order, every key-shaped string, PEM private key
// and canary in the regular text files under o.Roots. It skips .git
// directories, binary files (a NUL in the first 8000 bytes), files over
// 4 MiB and paths o.Allow matches, matched against the path below each
// root. It stops at ctx's end or the first walk error, naming the root.
func Scan(ctx context.Context, o ScanOptions, report func(Finding)) error {
	red := redact.New(redact.WithLiterals(o.Canaries...))
	for _, root := range o.Roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rel := filepath.ToSlash(p)
			if r, err := filepath.Rel(root, p); err == nil && r != "." {
				rel = filepath.ToSlash(r)
			}
			if d.IsDir() {
				if d.Name() == ".git" || (p != root && Allowed(o.Allow, rel)) {
					return filepath.SkipDir
				}
				return nil
			}
			if Allowed(o.Allow, rel) || !d.Type().IsRegular() {
				return nil
			}
			return scanFile(red, p, report)
		})
		if err != nil {
			return fmt.Errorf("secrets scan %s: %w", root, err)
		}
	}
	return nil
}

func scanFile(red *redact.Redactor, p string, report func(Finding)) error {
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
		if slices.Contains(scanKinds, f.Kind) {
			report(Finding{Path: filepath.ToSlash(p), Line: 1 + bytes.Count(data[:f.Start], []byte("\n")), Kind: f.Kind})
		}
	}
	return nil
}

// ReadAllowFile reads path globs, one a line ('#' starts a comment); a
// missing file is an empty list unless required. Errors start with
// "--allow", the option that names such a file.
func ReadAllowFile(name string, required bool) ([]string, error) {
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

// Allowed reports whether the slash path p (with any leading "./" dropped)
// matches a glob; "dir/**" matches everything under dir.
func Allowed(globs []string, p string) bool {
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

// ScanRequest is one `secrets scan`: the paths, a secrets file whose values
// are canaries too, and an allow file of path globs (required unless it is
// DefaultAllowFile).
type ScanRequest struct {
	Paths       []string
	SecretsFile string
	AllowFile   string
}

// ScanFiles runs r: it looks for key-shaped strings and for every secret
// taken from the environment or read from r.SecretsFile, reporting each
// finding (never its text) and returning how many there were.
func ScanFiles(ctx context.Context, r ScanRequest, report func(Finding)) (int, error) {
	file, err := NewStore(func(string) string { return "" }, r.SecretsFile)
	if err != nil {
		return 0, err
	}
	allow, err := ReadAllowFile(r.AllowFile, r.AllowFile != DefaultAllowFile)
	if err != nil {
		return 0, err
	}
	n := 0
	err = Scan(ctx, ScanOptions{Roots: r.Paths, Canaries: append(EnvValues(), file.Values()...), Allow: allow},
		func(f Finding) { n++; report(f) })
	return n, err
}
