package capability

import (
	"fmt"
	"os"

	"github.com/cuahq/cua/internal/domain"
)

// MaxFileSize bounds a capability file.
const MaxFileSize = 4 << 20

// Loaded is a validated capability and what loading learned about it.
type Loaded struct {
	Capability *domain.Capability
	File       string
	// Hash is the computed content hash.
	Hash string
	// Sealed is true when the file declares a content hash (which then
	// equals Hash; a mismatch is an error).
	Sealed bool
	doc    *document
}

// Load reads and validates the capability file at path. It returns an
// *InvalidError listing every problem, or a *HashMismatchError when a sealed
// file's content changed.
func Load(path string) (*Loaded, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

func readLimited(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read capability: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("read capability: %s is a directory", path)
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("read capability: %s is larger than %d bytes", path, MaxFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read capability: %w", err)
	}
	return data, nil
}

// Parse validates data as the capability file named file.
func Parse(file string, data []byte) (*Loaded, error) {
	l, err := parseUnverified(file, data)
	if err != nil {
		return nil, err
	}
	if l.Sealed && l.Capability.ContentHash != l.Hash {
		return nil, &HashMismatchError{File: file, Ref: l.Capability.Ref(), Declared: l.Capability.ContentHash, Computed: l.Hash}
	}
	return l, nil
}

// parseUnverified validates everything but the declared hash.
func parseUnverified(file string, data []byte) (*Loaded, error) {
	doc, err := parseDocument(file, data)
	if err != nil {
		return nil, err
	}
	ps, err := doc.schemaProblems()
	if err != nil {
		return nil, err
	}
	if len(ps) > 0 {
		return nil, &InvalidError{File: file, Problems: sortProblems(ps)}
	}
	doc.applyTreeDefaults()
	c, err := doc.decode()
	if err != nil {
		return nil, err
	}
	ApplyDefaults(c)
	if ps := doc.semanticProblems(c); len(ps) > 0 {
		return nil, &InvalidError{File: file, Problems: ps}
	}
	h, err := Hash(c)
	if err != nil {
		return nil, err
	}
	return &Loaded{Capability: c, File: file, Hash: h, Sealed: c.ContentHash != "", doc: doc}, nil
}

func sortProblems(ps []Problem) []Problem {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].Line < ps[j-1].Line; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	return ps
}
