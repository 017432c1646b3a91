package observer

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/redact"
)

// runIDPattern is evidence's rule for a run id (a directory name that can
// never be "..", hold a slash or start with a dot).
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// shotPattern is the only screenshot name served: screenshots/step-NNN.png
// (after a step), step-NNN-before.png (before an elevated or irreversible
// action), step-NNN-after.png (after one, when it was deferred),
// park-NNN.png (a screen parked on) and final.png (the screen a run ended
// on).
var shotPattern = regexp.MustCompile(`^(step-[0-9]{3,6}(-before|-after)?|park-[0-9]{3,6}|final)\.png$`)

// maxFile bounds what the observer reads of one bundle file.
const maxFile = 32 << 20

// errNotServed covers a missing run and a run the observer does not serve:
// callers must not tell them apart.
var errNotServed = errors.New("observer: run not served")

// verifyFunc is evidence.Verify's shape (evidence.VerifyDeployment with
// the library's key).
type verifyFunc func(dir string, canaries []string) evidence.Report

// LibraryOptions configures a Library.
type LibraryOptions struct {
	// RunsDir is <data-dir>/runs.
	RunsDir string
	// Only, when set, is the one run served (`cua observe RUN`); every
	// other run is not served.
	Only string
	// Safe serves only runs whose bundle passes evidence.VerifyDeployment:
	// with a deployment key, only bundles whose signature verifies with it.
	Safe bool
	// Canaries are secret values to look for: Verify's secret scan, and a
	// last redaction pass over every text the observer renders.
	Canaries []string
	// Redactor, when set, is that last pass (it must know Canaries); nil
	// builds one like the bundle writer's: every pattern on, Canaries as
	// literals.
	Redactor *redact.Redactor
	// Key is the public key a bundle's signature must verify with; nil
	// loads the deployment's key (evidence.DeploymentKey) of DataDir,
	// default the directory that holds RunsDir. With no key configured,
	// bundles are checked unsigned (chain, manifest, scans only).
	Key     ed25519.PublicKey
	DataDir string
}

// Library reads run bundles for the observer. It never writes. Safe for
// concurrent use.
type Library struct {
	opts   LibraryOptions
	red    *redact.Redactor
	verify verifyFunc

	mu    sync.Mutex
	cache map[string]verified // run id → last verify, by fingerprint
}

type verified struct {
	fp  string
	rep evidence.Report
}

// NewLibrary returns a Library over opts.RunsDir. It returns an error naming
// the field when Only is not a valid run id.
func NewLibrary(opts LibraryOptions) (*Library, error) {
	if opts.RunsDir == "" {
		return nil, errors.New("observer: LibraryOptions.RunsDir is empty")
	}
	if opts.Only != "" && !runIDPattern.MatchString(opts.Only) {
		return nil, fmt.Errorf("observer: LibraryOptions.Only %q: not a run id", opts.Only)
	}
	red := opts.Redactor
	if red == nil {
		red = redact.New(redact.WithLiterals(opts.Canaries...))
	}
	key := opts.Key
	if key == nil {
		dataDir := opts.DataDir
		if dataDir == "" {
			dataDir = filepath.Dir(filepath.Clean(opts.RunsDir))
		}
		var err error
		if key, err = evidence.DeploymentKey(dataDir); err != nil {
			return nil, fmt.Errorf("observer: %w", err)
		}
	}
	verify := func(dir string, canaries []string) evidence.Report {
		return evidence.VerifyDeployment(dir, key, canaries)
	}
	return &Library{opts: opts, red: red, verify: verify, cache: map[string]verified{}}, nil
}

// bundleFile is one file of a run directory as listed.
type bundleFile struct {
	rel     string
	size    int64
	regular bool
}

// listing is a run directory's files and its fingerprint: every file's
// path, type, size and modification time. A changed fingerprint means the
// run is verified again.
type listing struct {
	dir   string
	files map[string]bundleFile
	fp    string
}

// list reads the run directory of id. A missing directory, a symlink and
// a bad id are all errNotServed.
func (l *Library) list(id string) (*listing, error) {
	if !runIDPattern.MatchString(id) || (l.opts.Only != "" && id != l.opts.Only) {
		return nil, errNotServed
	}
	dir := filepath.Join(l.opts.RunsDir, id)
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil, errNotServed
	}
	ls := &listing{dir: dir, files: map[string]bundleFile{}}
	h := sha256.New()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%v\x00%d\x00%d\n", rel, info.Mode(), info.Size(), info.ModTime().UnixNano())
		if !d.IsDir() {
			rel = filepath.ToSlash(rel)
			ls.files[rel] = bundleFile{rel: rel, size: info.Size(), regular: d.Type().IsRegular()}
		}
		return nil
	})
	if err != nil {
		return nil, errNotServed
	}
	ls.fp = hex.EncodeToString(h.Sum(nil))
	return ls, nil
}

// report returns ls's verify report, from the cache when no file changed.
func (l *Library) report(id string, ls *listing) evidence.Report {
	l.mu.Lock()
	v, ok := l.cache[id]
	l.mu.Unlock()
	if ok && v.fp == ls.fp {
		return v.rep
	}
	rep := l.verify(ls.dir, l.opts.Canaries)
	l.mu.Lock()
	l.cache[id] = verified{fp: ls.fp, rep: rep}
	l.mu.Unlock()
	return rep
}

// open lists and verifies run id and says whether it is served.
func (l *Library) open(id string) (*listing, evidence.Report, error) {
	ls, err := l.list(id)
	if err != nil {
		return nil, evidence.Report{}, err
	}
	rep := l.report(id, ls)
	if l.opts.Safe && !rep.ShareReady {
		return nil, evidence.Report{}, errNotServed
	}
	return ls, rep, nil
}

// read returns the bytes of file rel of a served run, or nil when the run
// has no such regular file. Under Safe, the bytes must be the ones Verify
// checked (their sha256 is the manifest's), or the run is not served.
func (l *Library) read(ls *listing, rep evidence.Report, rel string) ([]byte, error) {
	f, ok := ls.files[rel]
	if !ok || !f.regular {
		if l.opts.Safe && ok {
			return nil, errNotServed
		}
		return nil, nil
	}
	raw, err := fsx.ReadFileNoFollow(filepath.Join(ls.dir, filepath.FromSlash(rel)), maxFile)
	if err != nil {
		return nil, errNotServed
	}
	if l.opts.Safe && !matchesReport(rep, rel, raw) {
		return nil, errNotServed
	}
	return raw, nil
}

func matchesReport(rep evidence.Report, rel string, raw []byte) bool {
	sum := sha256.Sum256(raw)
	want := hex.EncodeToString(sum[:])
	for _, fc := range rep.Files {
		if fc.Path == rel {
			return fc.Status == evidence.FileOK && fc.SHA256 == want && fc.Size == int64(len(raw))
		}
	}
	return false
}

// IDs lists the run ids under RunsDir that could be served (Only alone in
// single-run mode), sorted.
func (l *Library) IDs() ([]string, error) {
	if l.opts.Only != "" {
		return []string{l.opts.Only}, nil
	}
	entries, err := os.ReadDir(l.opts.RunsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("observer: list runs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && runIDPattern.MatchString(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Summaries returns every served run's summary, newest first, that f
// keeps.
func (l *Library) Summaries(f Filter) ([]Summary, error) {
	ids, err := l.IDs()
	if err != nil {
		return nil, err
	}
	l.prune(ids)
	out := []Summary{}
	for _, id := range ids {
		ls, rep, err := l.open(id)
		if err != nil {
			continue
		}
		s, err := l.summary(id, ls, rep)
		if err != nil || !f.keep(s) {
			continue
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].StartedAt != out[j].StartedAt {
			return out[i].StartedAt > out[j].StartedAt
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// prune forgets the verify reports of runs no longer listed.
func (l *Library) prune(ids []string) {
	keep := make(map[string]bool, len(ids))
	for _, id := range ids {
		keep[id] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.cache {
		if !keep[id] {
			delete(l.cache, id)
		}
	}
}

// decodeRecord reads record.json leniently: a bundle still running has
// none, and an unreadable one is a problem shown, not a failure.
func decodeRecord(raw []byte) (*domain.RunRecord, string) {
	if raw == nil {
		return nil, "no record.json yet"
	}
	var rec domain.RunRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, "record.json is not a run record"
	}
	return &rec, ""
}

// decodeReceipt reads receipt.json as a generic object.
func decodeReceipt(raw []byte) (map[string]any, string) {
	if raw == nil {
		return nil, ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, "receipt.json is not a JSON object"
	}
	return m, ""
}

// screenshots lists the run's screenshots/step-NNN.png files, sorted.
func (ls *listing) screenshots() []string {
	var out []string
	for rel, f := range ls.files {
		dir, name := pathSplit(rel)
		if dir == "screenshots" && f.regular && shotPattern.MatchString(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func pathSplit(rel string) (string, string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}
