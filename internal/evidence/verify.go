package evidence

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/redact"
)

// ReportSchemaVersion is the version of Report's JSON shape (2 adds
// signature, signing_key and head).
const ReportSchemaVersion = 2

// Report is the result of Verify: whether a finished bundle can be shared
// as it is, and every reason it cannot. No field holds a secret: reasons
// name a file, a line and a kind, never the text found.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	RunID         string `json:"run_id,omitempty"`
	// ShareReady is true only when the chain verifies, every file matches
	// the manifest, and no file holds a secret or an absolute host path.
	ShareReady bool `json:"share_ready"`
	// ChainOK: events.jsonl's hash chain verifies and ends at the
	// manifest's chain head. Events is how many lines verified and
	// ChainHead the hash of the last of them (up to the first broken link).
	ChainOK   bool   `json:"chain_ok"`
	Events    int    `json:"events"`
	ChainHead string `json:"chain_head,omitempty"`
	// ManifestOK: manifest.json exists and every file matches it.
	ManifestOK bool `json:"manifest_ok"`
	// Signature is manifest.sig against the trusted key: ok, unsigned,
	// bad, or not checked (no key given); SigningKey is the fingerprint
	// of the key manifest.sig names.
	Signature  string `json:"signature"`
	SigningKey string `json:"signing_key,omitempty"`
	// Head is the chain head against the store's run row: ok, mismatch,
	// not anchored (the row keeps none), not in the store, or not checked
	// (no store).
	Head    string      `json:"head"`
	Files   []FileCheck `json:"files"`
	Reasons []string    `json:"reasons"`
	// Evidence is what the bundle's evidence level kept: screenshots by
	// reason and observation digests (summary.go); nil when events.jsonl
	// cannot be read.
	Evidence *EvidenceSummary `json:"evidence,omitempty"`
}

// FileCheck is one file of the bundle against the manifest.
type FileCheck struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
	// Status is ok, changed (digest or size differ), missing (in the
	// manifest, not on disk), extra (on disk, not in the manifest) or
	// unlisted (no manifest to check against).
	Status string `json:"status"`
}

// File check statuses.
const (
	FileOK       = "ok"
	FileChanged  = "changed"
	FileMissing  = "missing"
	FileExtra    = "extra"
	FileUnlisted = "unlisted"
)

// maxVerifyFile bounds how much of one file the secret and path scans read.
const maxVerifyFile = fsx.MaxBundleFile

// hostPathPrefixes start absolute host paths a shareable bundle must not
// hold (a user's home, a temp dir, a machine's layout).
var hostPathPrefixes = []string{"/home/", "/root/", "/tmp/", "/Users/", "/var/folders/", "/private/", "/work/", "/mnt/", "/srv/", "/opt/"}

// secretKinds are the findings that make a bundle unshareable: registered
// canaries (whole, encoded or as a fragment), key-shaped strings, JSON Web
// Tokens and PEM private keys.
var secretKinds = []redact.Kind{redact.KindLiteral, redact.KindKey, redact.KindJWT, redact.KindPrivateKey}

// Verify checks the finished bundle in dir, reading only that directory:
// (a) the hash chain of events.jsonl, naming the first broken link; (b)
// every file's sha256 and size against manifest.json, naming each missing,
// extra or changed file (a missing manifest is a reason); (c) a secret scan
// of every file for canaries (also transformed: case, spacing, any
// redact.FragmentLen-rune fragment) and key-shaped strings; (d) a path scan
// for absolute host paths, the bundle's own path included. Binary files
// (a NUL in their first 8000 bytes) are scanned for canaries only.
//
// Verify checks no signature and no store: a bundle-only check. Use
// VerifyWith for what `cua verify` checks (invariant 18).
func Verify(dir string, canaries []string) Report {
	return VerifyWith(dir, VerifyOptions{Canaries: canaries})
}

// VerifyOptions say what VerifyWith checks besides the bundle itself.
type VerifyOptions struct {
	// Canaries are secret values no file may hold.
	Canaries []string
	// Key is the trusted public key manifest.sig must verify with; with
	// RequireSignature, an unsigned bundle, or a signed one with no Key to
	// check it, is not share_ready.
	Key              ed25519.PublicKey
	RequireSignature bool
	// Anchor is the store's run row (nil: no store checked); the chain
	// head must be the one it keeps, and manifest.sig its signature.
	// NotInStore says a store was checked and holds no such run.
	Anchor     *Anchor
	NotInStore bool
}

// VerifyWith is Verify plus (e) manifest.sig checked with opts.Key and
// against the store's signature; (f) the chain head against the store's;
// (g) the inputs of record.json against the run_started event's (which the
// signed manifest's inputs_digest covers).
func VerifyWith(dir string, opts VerifyOptions) Report {
	canaries := opts.Canaries
	rep := Report{SchemaVersion: ReportSchemaVersion, Files: []FileCheck{}, Reasons: []string{}}
	m, merr := readManifest(dir)
	if merr != nil {
		rep.Reasons = append(rep.Reasons, merr.Error())
	} else {
		rep.RunID = m.RunID
	}
	rep.checkChain(dir, m)
	onDisk, err := digestFiles(dir)
	if err != nil {
		rep.Reasons = append(rep.Reasons, "bundle: cannot list every file (unreadable entry)")
	}
	rep.checkFiles(onDisk, m)
	rep.summarizeEvidence(dir, onDisk)
	rep.checkInputs(dir, m)
	rep.checkSignature(dir, opts)
	rep.checkHead(opts)
	rep.scan(dir, onDisk, canaries)
	rep.ShareReady = len(rep.Reasons) == 0
	return rep
}

func readManifest(dir string) (*Manifest, error) {
	raw, err := fsx.ReadFileNoFollow(filepath.Join(dir, ManifestFile), fsx.MaxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("manifest.json: missing (the bundle was not finished)")
	}
	if err != nil {
		return nil, errors.New(unreadable(ManifestFile, "unreadable", err))
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest.json: not a manifest: %v", err)
	}
	if m.SchemaVersion != ManifestSchemaVersion && m.SchemaVersion != 1 {
		return nil, fmt.Errorf("manifest.json: schema_version %d, want %d", m.SchemaVersion, ManifestSchemaVersion)
	}
	return &m, nil
}

// checkChain verifies events.jsonl line by line and records the first
// broken link; then that the chain ends where the manifest says.
func (rep *Report) checkChain(dir string, m *Manifest) {
	raw, err := fsx.ReadFileNoFollow(filepath.Join(dir, "events.jsonl"), fsx.MaxBundleFile)
	if err != nil {
		rep.Reasons = append(rep.Reasons, unreadable("events.jsonl", "missing or unreadable", err))
		return
	}
	head, n, broken := verifyChain(raw)
	rep.Events, rep.ChainHead = n, head
	if broken != "" {
		rep.Reasons = append(rep.Reasons, broken)
		return
	}
	if m != nil && (m.ChainHead != head || m.Events != n) {
		rep.Reasons = append(rep.Reasons, fmt.Sprintf(
			"events.jsonl: chain ends at seq %d (%s), manifest says seq %d (%s): events were removed or added at the end",
			n, head, m.Events, m.ChainHead))
		return
	}
	rep.ChainOK = m != nil
}

// verifyChain walks raw's lines: seq counts from 1, prev is the previous
// hash, hash = "sha256:" + hex(sha256(prev + line with "hash":"")). It
// returns the head, the number of verified lines, and the first broken
// link described (empty when none).
func verifyChain(raw []byte) (head string, n int, broken string) {
	head = Genesis
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		defer func() {
			if broken == "" {
				broken = fmt.Sprintf("events.jsonl: line %d (seq %d): last line is not terminated", n, n)
			}
		}()
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 16<<20)
	for i := 1; sc.Scan(); i++ {
		if why := checkLink(sc.Bytes(), i, head); why != "" {
			return head, n, fmt.Sprintf("events.jsonl: first broken link at line %d (seq %d): %s", i, i, why)
		}
		var e struct {
			Hash string `json:"hash"`
		}
		_ = json.Unmarshal(sc.Bytes(), &e)
		head, n = e.Hash, i
	}
	if err := sc.Err(); err != nil {
		return head, n, fmt.Sprintf("events.jsonl: line %d: %v", n+1, err)
	}
	return head, n, ""
}

// checkLink checks one line against its expected seq and prev; it returns
// why the link is broken, or "".
func checkLink(line []byte, seq int, prev string) string {
	var e Event
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return "not an event (the line was edited)"
	}
	if e.Seq != seq {
		return fmt.Sprintf("holds seq %d (an event was removed, added or moved)", e.Seq)
	}
	if e.Prev != prev {
		return "prev is not the previous event's hash (an event was removed, added or moved)"
	}
	field := []byte(`"hash":"` + e.Hash + `"`)
	if bytes.Count(line, field) != 1 {
		return "hash field not found once"
	}
	body := bytes.Replace(line, field, []byte(`"hash":""`), 1)
	sum := sha256.Sum256(append([]byte(prev), body...))
	if e.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
		return "hash does not match the event's content (the line was edited)"
	}
	return ""
}

// checkFiles compares the files on disk with the manifest's.
func (rep *Report) checkFiles(onDisk map[string]FileDigest, m *Manifest) {
	names := make([]string, 0, len(onDisk))
	for name := range onDisk {
		names = append(names, name)
	}
	if m != nil {
		for name := range m.Files {
			if _, ok := onDisk[name]; !ok {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	ok := m != nil
	for _, name := range names {
		got, present := onDisk[name]
		fc := FileCheck{Path: name, Size: got.Size, SHA256: got.SHA256, Status: FileUnlisted}
		if m != nil {
			want, listed := m.Files[name]
			switch {
			case !present:
				fc.Status, fc.Size, fc.SHA256 = FileMissing, want.Size, want.SHA256
				rep.Reasons = append(rep.Reasons, fmt.Sprintf("%s: listed in the manifest, missing from the bundle", name))
			case !listed:
				fc.Status = FileExtra
				rep.Reasons = append(rep.Reasons, fmt.Sprintf("%s: not in the manifest (a file was added)", name))
			case want != got || got.SHA256 == "":
				fc.Status = FileChanged
				rep.Reasons = append(rep.Reasons, fmt.Sprintf("%s: sha256 or size differs from the manifest (the file was changed)", name))
			default:
				fc.Status = FileOK
			}
			ok = ok && fc.Status == FileOK
		}
		rep.Files = append(rep.Files, fc)
	}
	rep.ManifestOK = ok
}

// scan runs the secret and path scans over every file of the bundle,
// manifest.json included.
func (rep *Report) scan(dir string, onDisk map[string]FileDigest, canaries []string) {
	red := redact.New(redact.WithLiterals(canaries...))
	names := make([]string, 0, len(onDisk)+1)
	for name, fd := range onDisk {
		if fd.SHA256 != "" {
			names = append(names, name)
		}
	}
	names = append(names, ManifestFile, SignatureFile)
	slices.Sort(names)
	roots := hostRoots(dir)
	for _, name := range names {
		data, err := readBounded(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				rep.Reasons = append(rep.Reasons, fmt.Sprintf("%s: cannot scan (unreadable or too large)", name))
			}
			continue
		}
		binary := bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
		rep.scanSecrets(name, data, red, binary)
		if !binary {
			rep.scanPaths(name, data, roots)
		}
	}
}

// readBounded reads a bundle file through cua's one bounded reader: a
// symlink, device or FIFO is refused, and so is a file over maxVerifyFile.
func readBounded(p string) ([]byte, error) {
	return fsx.ReadFileNoFollow(p, maxVerifyFile)
}

// unreadable is the reason a bundle file could not be read, naming it
// (never the host path): not a regular file, too large, or otherwise what.
func unreadable(name, what string, err error) string {
	switch {
	case errors.Is(err, fsx.ErrNotRegular):
		return name + ": not a regular file (a symlink, device or FIFO is never read)"
	case errors.Is(err, fsx.ErrTooLarge):
		return name + ": too large to read"
	}
	return name + ": " + what
}

func (rep *Report) scanSecrets(name string, data []byte, red *redact.Redactor, binary bool) {
	seen := map[string]bool{}
	for _, f := range red.Find(string(data)) {
		if !slices.Contains(secretKinds, f.Kind) || (binary && f.Kind != redact.KindLiteral) {
			continue
		}
		what := "key-shaped string (" + string(f.Kind) + ")"
		if f.Kind == redact.KindLiteral {
			what = "registered secret (whole or a fragment)"
		}
		r := fmt.Sprintf("%s:%d: holds a %s", name, lineOf(data, f.Start), what)
		if !seen[r] {
			seen[r] = true
			rep.Reasons = append(rep.Reasons, r)
		}
	}
}

// hostRoots are the prefixes the path scan refuses: the usual host
// directories, the bundle's absolute path and its data directory's.
func hostRoots(dir string) []string {
	roots := slices.Clone(hostPathPrefixes)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return roots
	}
	abs = filepath.ToSlash(abs)
	roots = append(roots, abs)
	if parent := filepath.Dir(abs); filepath.Base(parent) == "runs" {
		if data := filepath.ToSlash(filepath.Dir(parent)); data != "/" {
			roots = append(roots, data+"/")
		}
	}
	return roots
}

func (rep *Report) scanPaths(name string, data []byte, roots []string) {
	s := string(data)
	for _, root := range roots {
		for off := 0; ; {
			i := strings.Index(s[off:], root)
			if i < 0 {
				break
			}
			at := off + i
			off = at + 1
			if !pathStart(s, at) {
				continue
			}
			shown := root
			if !slices.Contains(hostPathPrefixes, root) {
				shown = "the data directory"
			}
			rep.Reasons = append(rep.Reasons, fmt.Sprintf("%s:%d: holds an absolute host path (%s)", name, lineOf(data, at), shown))
			break
		}
	}
}

// pathStart reports whether an absolute path may start at s[i]: at the
// start, after a byte that cannot be part of a URL's host or path, or right
// after "file://". "http://host/home/x" is a URL path, not a host path.
func pathStart(s string, i int) bool {
	if i == 0 || strings.HasSuffix(s[:i], "file://") {
		return true
	}
	c := s[i-1]
	isURLByte := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~%-/+@", c) >= 0
	return !isURLByte
}

func lineOf(data []byte, at int) int {
	return 1 + bytes.Count(data[:at], []byte("\n"))
}
