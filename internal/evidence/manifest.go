package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/cuahq/cua/internal/fsx"
)

// ManifestFile is the name of a finished bundle's manifest.
const ManifestFile = "manifest.json"

// ManifestSchemaVersion is the version of manifest.json's shape: 2 adds
// the capability, its content hash, the inputs digest and the signing key
// (version 1 manifests are still read; they are never signed).
const ManifestSchemaVersion = 2

// Genesis is the prev of a run's first event, and the chain head of a run
// with no events.
const Genesis = "sha256:genesis"

// Manifest is manifest.json: what a finished bundle holds, so a verifier
// can tell a changed, missing or added file from the bundle as written.
type Manifest struct {
	SchemaVersion int    `json:"schema_version"`
	RunID         string `json:"run_id"`
	// ChainHead is the hash of the last event of events.jsonl (Genesis when
	// the log is empty); Events is how many events the log holds.
	ChainHead string `json:"chain_head"`
	Events    int    `json:"events"`
	// Capability (id@version) and ContentHash name what ran (from the
	// run_started event, else the record); empty when neither was written.
	Capability  string `json:"capability,omitempty"`
	ContentHash string `json:"content_hash,omitempty"`
	// InputsDigest is "sha256:" + hex of the run_started event's inputs as
	// written (compact JSON, sorted keys): plain inputs by value, sensitive
	// ones as keyed digests, never a value. Empty when the run never
	// started.
	InputsDigest string `json:"inputs_digest,omitempty"`
	// SigningKey is the public half (signkey's text form) of the key that
	// signed manifest.sig; empty when the bundle is unsigned. It says which
	// key to check against; it is never a reason to trust the signature.
	SigningKey string `json:"signing_key,omitempty"`
	// Files maps each file's slash-separated path below the bundle (every
	// file but manifest.json itself) to its digest and size.
	Files map[string]FileDigest `json:"files"`
}

// FileDigest is one file's sha256 (lower-case hex) and size in bytes.
type FileDigest struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// writeManifest writes dir's manifest.json atomically: m with every
// regular file below dir but the manifest and its signature. It returns
// the bytes written (what a signature covers).
func writeManifest(dir string, m Manifest) ([]byte, error) {
	files, err := digestFiles(dir)
	if err != nil {
		return nil, err
	}
	m.SchemaVersion, m.Files = ManifestSchemaVersion, files
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("evidence: encode manifest: %w", err)
	}
	raw = append(raw, '\n')
	return raw, writeAtomic(filepath.Join(dir, ManifestFile), raw)
}

// digestFiles hashes every regular file below dir except the manifest,
// keyed by slash-separated relative path. Symlinks and other non-regular
// entries are listed with an empty digest, so a verifier names them.
func digestFiles(dir string) (map[string]FileDigest, error) {
	out := map[string]FileDigest{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ManifestFile || rel == SignatureFile {
			return nil
		}
		if !d.Type().IsRegular() {
			out[rel] = FileDigest{}
			return nil
		}
		fd, err := digestFile(p)
		if err != nil {
			return err
		}
		out[rel] = fd
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("evidence: digest bundle files: %w", err)
	}
	return out, nil
}

func digestFile(p string) (FileDigest, error) {
	f, err := fsx.OpenNoFollow(p)
	if err != nil {
		return FileDigest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileDigest{}, err
	}
	return FileDigest{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}
