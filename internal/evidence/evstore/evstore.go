// Package evstore is the evidence store a fleet shares: one run library
// named by a URL (`--evidence`), so every worker's bundles can be listed,
// served and verified from one place.
//
//	file://DIR                     bundles are directories DIR/<run-id>/
//	                               (the default: <data-dir>/runs)
//	s3://bucket?endpoint=…&region=…&s3ForcePathStyle=true
//	                               bundles are objects runs/<run-id>/<file>
//	                               (credentials: the AWS environment)
//
// A bundle is always written locally first (its hash chain and screenshots
// are written as the run goes); Publish copies a closed, signed bundle to
// the store: every file, then manifest.json, then manifest.sig, so a reader
// that finds manifest.sig (manifest.json for an unsigned bundle) knows the
// bundle is whole. Fetch downloads one bundle into a local directory with
// every read bounded (sizes and file counts capped), for the existing
// verifier and observer to read.
package evstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // registers s3://

	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/fsx"
)

// Caps on what Fetch downloads of one bundle.
const (
	// MaxFile bounds one file of a bundle.
	MaxFile = 64 << 20
	// MaxBundle bounds a whole bundle.
	MaxBundle = 512 << 20
	// MaxFiles bounds how many files one bundle holds.
	MaxFiles = 10000
)

// prefix is where bundles live in an object store.
const prefix = "runs/"

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// relPattern is a file name a bundle may hold: slash-separated segments,
// none empty, "." or "..", none starting with a dot.
var relPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$`)

// Store is an evidence store: a directory (file://) or a bucket.
type Store struct {
	url string
	// dir is a file:// store's directory (absolute); "" for a bucket.
	dir    string
	bucket *blob.Bucket
}

// Open opens the store rawURL names; "" is file://<dataDir>/runs. A bad
// URL is an error naming --evidence.
func Open(ctx context.Context, rawURL, dataDir string) (*Store, error) {
	if rawURL == "" {
		rawURL = "file://" + filepath.Join(dataDir, "runs")
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--evidence %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "file":
		dir := u.Host + u.Path
		if dir == "" {
			return nil, fmt.Errorf("--evidence %q: file:// needs a directory", rawURL)
		}
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, fmt.Errorf("--evidence %q: %w", rawURL, err)
		}
		return &Store{url: rawURL, dir: dir}, nil
	case "s3":
		if u.Host == "" {
			return nil, fmt.Errorf("--evidence %q: s3:// needs a bucket", rawURL)
		}
		b, err := blob.OpenBucket(ctx, rawURL)
		if err != nil {
			return nil, fmt.Errorf("--evidence %q: %w", rawURL, err)
		}
		return &Store{url: rawURL, bucket: b}, nil
	default:
		return nil, fmt.Errorf("--evidence %q: want file://DIR or s3://BUCKET?…", rawURL)
	}
}

// URL is the URL the store was opened with.
func (s *Store) URL() string { return s.url }

// Dir is a file:// store's directory, "" for an object store.
func (s *Store) Dir() string { return s.dir }

// Close releases the store.
func (s *Store) Close() error {
	if s.bucket == nil {
		return nil
	}
	return s.bucket.Close()
}

// Publish copies the closed bundle dir of run runID to the store: every
// file, then manifest.json, then manifest.sig. A file:// store whose
// directory already holds dir publishes nothing.
func (s *Store) Publish(ctx context.Context, runID, dir string) error {
	if !runIDPattern.MatchString(runID) {
		return fmt.Errorf("evstore: bad run id %q", runID)
	}
	files, err := bundleFiles(dir)
	if err != nil {
		return err
	}
	if s.dir != "" {
		abs, err := filepath.Abs(dir)
		if err == nil && filepath.Clean(abs) == filepath.Join(s.dir, runID) {
			return nil
		}
	}
	for _, rel := range files {
		if err := s.put(ctx, runID, dir, rel); err != nil {
			return err
		}
	}
	return nil
}

// bundleFiles lists dir's regular files, slash-separated, manifest.json and
// manifest.sig last (in that order).
func bundleFiles(dir string) ([]string, error) {
	var files []string
	last := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("evstore: %s: not a regular file", p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == evidence.ManifestFile || rel == evidence.SignatureFile {
			last[rel] = true
			return nil
		}
		if strings.HasPrefix(path.Base(rel), ".") {
			return nil // a writer's temp file
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("evstore: list bundle %s: %w", dir, err)
	}
	if len(files) > MaxFiles {
		return nil, fmt.Errorf("evstore: bundle %s: %d files, more than %d", dir, len(files), MaxFiles)
	}
	slices.Sort(files)
	for _, name := range []string{evidence.ManifestFile, evidence.SignatureFile} {
		if last[name] {
			files = append(files, name)
		}
	}
	return files, nil
}

func (s *Store) put(ctx context.Context, runID, dir, rel string) error {
	f, err := fsx.OpenNoFollow(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("evstore: publish %s/%s: %w", runID, rel, err)
	}
	defer f.Close()
	r := io.LimitReader(f, MaxFile+1)
	if s.dir != "" {
		return copyToDir(filepath.Join(s.dir, runID, filepath.FromSlash(rel)), r, runID, rel)
	}
	w, err := s.bucket.NewWriter(ctx, prefix+runID+"/"+rel, nil)
	if err != nil {
		return fmt.Errorf("evstore: publish %s/%s: %w", runID, rel, err)
	}
	n, err := io.Copy(w, r)
	if err == nil && n > MaxFile {
		err = fmt.Errorf("larger than %d bytes", MaxFile)
	}
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("evstore: publish %s/%s: %w", runID, rel, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("evstore: publish %s/%s: %w", runID, rel, err)
	}
	return nil
}

// copyToDir writes r to path through a temp file renamed into place.
func copyToDir(dst string, r io.Reader, runID, rel string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("evstore: publish %s/%s: %w", runID, rel, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".publish-*.tmp")
	if err != nil {
		return fmt.Errorf("evstore: publish %s/%s: %w", runID, rel, err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, r)
	if err == nil && n > MaxFile {
		err = fmt.Errorf("larger than %d bytes", MaxFile)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		return fmt.Errorf("evstore: publish %s/%s: %w", runID, rel, err)
	}
	return nil
}

// IDs lists the runs whose bundle is whole in an object store: those with
// manifest.sig, or with manifest.json and no signature (an unsigned
// deployment). A file:// store lists its directory's run directories.
func (s *Store) IDs(ctx context.Context) ([]string, error) {
	if s.dir != "" {
		entries, err := os.ReadDir(s.dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("evstore: list %s: %w", s.dir, err)
		}
		var ids []string
		for _, e := range entries {
			if e.IsDir() && runIDPattern.MatchString(e.Name()) {
				ids = append(ids, e.Name())
			}
		}
		return ids, nil
	}
	seen := map[string]int{} // run id → 1 manifest.json, 2 manifest.sig
	it := s.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("evstore: list %s: %w", s.url, err)
		}
		id, rel, ok := strings.Cut(strings.TrimPrefix(obj.Key, prefix), "/")
		if !ok || !runIDPattern.MatchString(id) {
			continue
		}
		switch rel {
		case evidence.ManifestFile:
			seen[id] = max(seen[id], 1)
		case evidence.SignatureFile:
			seen[id] = 2
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// Fetch downloads run runID's bundle into dest/<runID>/ (dest must exist)
// and returns that directory. Every object is read bounded (MaxFile each,
// MaxBundle in all, MaxFiles files); a key that is not a plain relative
// name is refused. A file:// store returns its own directory of the run.
func (s *Store) Fetch(ctx context.Context, runID, dest string) (string, error) {
	if !runIDPattern.MatchString(runID) {
		return "", fmt.Errorf("evstore: bad run id %q", runID)
	}
	if s.dir != "" {
		dir := filepath.Join(s.dir, runID)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("evstore: no run %s in %s", runID, s.url)
		}
		return dir, nil
	}
	out := filepath.Join(dest, runID)
	var total int64
	files := 0
	it := s.bucket.List(&blob.ListOptions{Prefix: prefix + runID + "/"})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("evstore: list %s: %w", runID, err)
		}
		rel := strings.TrimPrefix(obj.Key, prefix+runID+"/")
		if !relPattern.MatchString(rel) {
			return "", fmt.Errorf("evstore: run %s: bad object name %q", runID, rel)
		}
		if files++; files > MaxFiles {
			return "", fmt.Errorf("evstore: run %s: more than %d files", runID, MaxFiles)
		}
		n, err := s.download(ctx, obj.Key, filepath.Join(out, filepath.FromSlash(rel)))
		if err != nil {
			return "", fmt.Errorf("evstore: fetch %s/%s: %w", runID, rel, err)
		}
		if total += n; total > MaxBundle {
			return "", fmt.Errorf("evstore: run %s: larger than %d bytes", runID, MaxBundle)
		}
	}
	if files == 0 {
		return "", fmt.Errorf("evstore: no run %s in %s", runID, s.url)
	}
	return out, nil
}

func (s *Store) download(ctx context.Context, key, dst string) (int64, error) {
	r, err := s.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	raw, err := fsx.ReadAll(r, key, MaxFile)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return 0, err
	}
	return int64(len(raw)), os.WriteFile(dst, raw, 0o600)
}

// Mirror downloads into dest every whole run of the store not already
// there (dest/<run-id>/), so the observer can serve them as a local
// library; a run that fails to download is skipped with its error
// returned after the others. A file:// store mirrors nothing.
func (s *Store) Mirror(ctx context.Context, dest string) error {
	if s.dir != "" {
		return nil
	}
	ids, err := s.IDs(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(dest, id)); err == nil {
			continue
		}
		tmp, err := os.MkdirTemp(dest, ".fetch-*")
		if err != nil {
			return fmt.Errorf("evstore: mirror: %w", err)
		}
		dir, err := s.Fetch(ctx, id, tmp)
		if err == nil && publishing(dir) {
			_ = os.RemoveAll(tmp)
			continue // its manifest.sig is still on its way: next time
		}
		if err == nil {
			err = os.Rename(dir, filepath.Join(dest, id))
		}
		_ = os.RemoveAll(tmp)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// publishing says a fetched bundle is a signed one caught between its
// manifest.json and its manifest.sig.
func publishing(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, evidence.SignatureFile)); err == nil {
		return false
	}
	raw, err := fsx.ReadFileNoFollow(filepath.Join(dir, evidence.ManifestFile), MaxFile)
	if err != nil {
		return false
	}
	var m evidence.Manifest
	return json.Unmarshal(raw, &m) == nil && m.SigningKey != ""
}
