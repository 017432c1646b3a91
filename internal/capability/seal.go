package capability

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Seal validates the draft capability at path, computes its content hash
// and writes it into the file in place, atomically, keeping the rest of the
// text (comments, layout) byte for byte. Sealing an already sealed file with
// the right hash changes nothing; a sealed file whose content changed is
// refused: its id@version is frozen, so bump the version and drop
// content_hash first. Seal pins nothing: a sealed file with an unpinned
// reference is refused wherever it would be stored or run, so cua's
// commands seal through SealPinned.
func Seal(path string) (string, error) {
	data, err := readLimited(path)
	if err != nil {
		return "", err
	}
	l, err := parseUnverified(path, data)
	if err != nil {
		return "", err
	}
	if l.Sealed {
		if err := unchanged(path, l); err != nil {
			return "", err
		}
		return l.Hash, nil
	}
	out, err := insertHash(l.doc, data, l.Hash)
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", path, err)
	}
	if back, err := Parse(path, out); err != nil || !back.Sealed || back.Capability.ContentHash != l.Hash {
		return "", fmt.Errorf("seal %s: the sealed text does not verify (a document-end marker or a trailing document?): %v", path, err)
	}
	if err := WriteFileAtomic(path, out); err != nil {
		return "", fmt.Errorf("seal %s: %w", path, err)
	}
	return l.Hash, nil
}

// unchanged refuses a sealed file whose content no longer matches its
// declared hash: its id@version was sealed before and is frozen
// (invariant 9). The error wraps a *HashMismatchError.
func unchanged(path string, l *Loaded) error {
	c := l.Capability
	if c.ContentHash == l.Hash {
		return nil
	}
	return fmt.Errorf("seal %s: %w: %s was sealed before and is frozen: bump the version (and remove content_hash) to seal a change",
		path, &HashMismatchError{File: path, Ref: c.Ref(), Declared: c.ContentHash, Computed: l.Hash}, c.Ref())
}

func insertHash(doc *document, data []byte, hash string) ([]byte, error) {
	top := doc.root.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the document is not a mapping")
	}
	trimmed := bytes.TrimRight(data, " \t\r\n")
	if top.Style&yaml.FlowStyle != 0 {
		// JSON or flow YAML: add the member before the closing brace.
		if len(trimmed) == 0 || trimmed[len(trimmed)-1] != '}' {
			return nil, fmt.Errorf("cannot find the closing brace of the top-level object")
		}
		body := bytes.TrimRight(trimmed[:len(trimmed)-1], " \t\r\n")
		var b bytes.Buffer
		b.Write(body)
		if len(top.Content) > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n  \"content_hash\": %q\n}\n", hash)
		return b.Bytes(), nil
	}
	var b bytes.Buffer
	b.Write(trimmed)
	fmt.Fprintf(&b, "\ncontent_hash: %s\n", hash)
	return b.Bytes(), nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, keeping path's mode when it exists.
func WriteFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write temp file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync temp file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close temp file: %w", err)
	}
	if err := os.Chmod(name, mode); err != nil {
		return fmt.Errorf("chmod temp file: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("rename temp file: %w", err)
	}
	return nil
}
