package capability

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/cuahq/cua/internal/domain"
)

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
	return LoadContext(context.Background(), path)
}

// LoadContext is Load that returns ctx.Err() as soon as ctx is done (within
// milliseconds, whatever phase validation is in). The file is read through
// ReadBounded (MaxFileSize; a device, FIFO or other non-regular file is
// refused at once).
func LoadContext(ctx context.Context, path string) (*Loaded, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return ParseContext(ctx, path, data)
}

func readLimited(path string) ([]byte, error) {
	data, err := ReadBounded(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("read capability: %w", err)
	}
	return data, nil
}

// Parse validates data as the capability file named file.
func Parse(file string, data []byte) (*Loaded, error) {
	return ParseContext(context.Background(), file, data)
}

// ParseContext is Parse that returns ctx.Err() as soon as ctx is done.
func ParseContext(ctx context.Context, file string, data []byte) (*Loaded, error) {
	l, err := parseUnverifiedContext(ctx, file, data)
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
	return parseUnverifiedContext(context.Background(), file, data)
}

// parseUnverifiedContext runs the phases of parseUnverified apart from the
// caller, so that it returns ctx.Err() as soon as ctx is done even while a
// library call that takes no context (the YAML parser, the schema
// validator) is running; the abandoned phases stop at their next check of
// ctx.
func parseUnverifiedContext(ctx context.Context, file string, data []byte) (*Loaded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		l   *Loaded
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := parsePhases(ctx, file, data)
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		return r.l, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// parsePhases parses, validates against the schema, decodes, checks
// semantics and hashes, checking ctx between phases (and inside the
// conversion of the YAML tree and the canonicaliser).
func parsePhases(ctx context.Context, file string, data []byte) (*Loaded, error) {
	doc, err := parseDocument(ctx, file, data)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ps, err := doc.schemaProblems()
	if err != nil {
		return nil, err
	}
	if len(ps) > 0 {
		return nil, &InvalidError{File: file, Problems: sortProblems(ps)}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	doc.applyTreeDefaults()
	c, err := doc.decode()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ApplyDefaults(c)
	if ps := doc.semanticProblems(c); len(ps) > 0 {
		return nil, &InvalidError{File: file, Problems: ps}
	}
	h, err := hashDefaulted(ctx, c)
	if err != nil {
		return nil, err
	}
	return &Loaded{Capability: c, File: file, Hash: h, Sealed: c.ContentHash != "", doc: doc}, nil
}

// sortProblems orders problems by line, keeping the order of problems on
// one line (a stable n·log n sort; an insertion sort here made a file with
// 200,000 unknown keys take minutes).
func sortProblems(ps []Problem) []Problem {
	// Sort indices (cheap to swap) by line then position, then permute once.
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(ps[a].Line, ps[b].Line); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	out := make([]Problem, len(ps))
	for i, j := range idx {
		out[i] = ps[j]
	}
	return out
}
