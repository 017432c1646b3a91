package replay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// Library finds the capabilities a run may call (prerequisites and
// run_capability remedies).
type Library interface {
	// Lookup finds ref: "id@version", or a bare "id" (its highest
	// version), which only a draft may name.
	Lookup(ref string) (*capability.Loaded, error)
	// LookupPinned finds the sealed capability whose content hash is pin;
	// it must carry ref exactly (id@version, or the id for a draft's bare
	// reference). What an approval of the caller's hash covers is what
	// runs (invariant 14).
	LookupPinned(ref, pin string) (*capability.Loaded, error)
}

// DirLibrary serves the sealed capabilities of one directory. It holds one
// file per id@version (invariant 14).
type DirLibrary struct {
	byRef  map[string]*capability.Loaded
	byID   map[string]*capability.Loaded
	byHash map[string]*capability.Loaded // sealed files only
	// edited holds, by id@version, the sealed files whose content no
	// longer matches their declared hash.
	edited map[string]*capability.HashMismatchError
}

// DuplicateError reports two files that claim the same id@version.
type DuplicateError struct {
	Ref          string
	First, Again string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("capability library: %s is defined twice, in %s and in %s; a library holds one file per id@version", e.Ref, e.First, e.Again)
}

// Unwrap classifies the error as CAPABILITY_INVALID.
func (e *DuplicateError) Unwrap() error {
	return &domain.Error{Code: domain.CodeCapabilityInvalid, Message: e.Error()}
}

// LoadDir loads every *.yaml, *.yml and *.json capability in dir. Files that
// do not load are skipped; a sealed file edited since it was sealed is
// reported, with its file and both hashes, when a pin names its
// id@version. Two files with the same id@version are refused, naming both.
func LoadDir(dir string) (*DirLibrary, error) {
	lib := newDirLibrary()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("capability library: %w", err)
	}
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		l, err := capability.Load(filepath.Join(dir, e.Name()))
		var edited *capability.HashMismatchError
		if errors.As(err, &edited) && lib.edited[edited.Ref] == nil {
			lib.edited[edited.Ref] = edited
		}
		if err != nil {
			continue
		}
		if err := lib.Add(l); err != nil {
			return nil, err
		}
	}
	return lib, nil
}

func newDirLibrary() *DirLibrary {
	return &DirLibrary{byRef: map[string]*capability.Loaded{}, byID: map[string]*capability.Loaded{},
		byHash: map[string]*capability.Loaded{}, edited: map[string]*capability.HashMismatchError{}}
}

// Add puts l in the library; for a bare id the highest version wins. A
// different file with the same id@version is refused; the same file (by
// path and content) again is a no-op.
func (lib *DirLibrary) Add(l *capability.Loaded) error {
	c := l.Capability
	if cur, ok := lib.byRef[c.Ref()]; ok {
		if sameFile(cur.File, l.File) && cur.Hash == l.Hash {
			return nil
		}
		return &DuplicateError{Ref: c.Ref(), First: cur.File, Again: l.File}
	}
	lib.byRef[c.Ref()] = l
	if l.Sealed {
		lib.byHash[l.Hash] = l
	}
	if cur, ok := lib.byID[c.ID]; !ok || semverLess(cur.Capability.Version, c.Version) {
		lib.byID[c.ID] = l
	}
	return nil
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// Preflight resolves every capability l may call (its prerequisites,
// run_capability remedies and effect read-backs, and theirs), refuses a
// read-back that is not read-only (capability.ReadOnlyProblem), checks that each sealed capability
// of the closure pins every call (id@version and content_hash) and that
// each call resolves to its pin, and refuses cycles. It runs before the
// surface is touched, so an unpinned, missing or tampered sub-capability
// costs no browser and no dispatch. Only a draft root may name a bare id
// (resolved to its highest version).
func Preflight(l *capability.Loaded, lib Library) error {
	return preflight(l, lib, []string{l.Capability.ID})
}

func preflight(l *capability.Loaded, lib Library, stack []string) error {
	c := l.Capability
	if l.Sealed {
		if err := capability.CheckPinned(c); err != nil {
			return err
		}
	}
	for _, call := range capability.Calls(c) {
		where := fmt.Sprintf("%s: %s", c.Ref(), call.Field)
		if lib == nil {
			return domain.Errorf(domain.CodeCapabilityInvalid, "%s calls %s, but no capability library was given", where, call.Ref)
		}
		id, _, _ := strings.Cut(call.Ref, "@")
		if slices.Contains(stack, id) {
			return domain.Errorf(domain.CodeCapabilityInvalid, "%s calls %s, which is already running (%s)", where, call.Ref, strings.Join(append(stack, id), " -> "))
		}
		sub, err := Resolve(lib, call.Ref, call.Pin)
		if err != nil {
			return domain.Errorf(domain.ErrorCode(err), "%s: %s", where, errMessage(err))
		}
		if why := capability.ReadOnlyProblem(sub.Capability); call.ReadBack && why != "" {
			return domain.Errorf(domain.CodeCapabilityInvalid, "%s: the read-back %s is not read-only: %s", where, sub.Capability.Ref(), why)
		}
		if err := preflight(sub, lib, append(stack, id)); err != nil {
			return err
		}
	}
	return nil
}

// Resolve finds the capability a call names: by its pin when it has one
// (Library.LookupPinned), else by ref (a draft's reference).
func Resolve(lib Library, ref, pin string) (*capability.Loaded, error) {
	if pin == "" {
		return lib.Lookup(ref)
	}
	return lib.LookupPinned(ref, pin)
}

func errMessage(err error) string {
	if de, ok := err.(*domain.Error); ok && de.Err == nil {
		return de.Message
	}
	return err.Error()
}

// Lookup returns the capability for ref. It must be sealed.
func (lib *DirLibrary) Lookup(ref string) (*capability.Loaded, error) {
	l, ok := lib.byRef[ref]
	if !ok {
		l, ok = lib.byID[ref]
	}
	if !ok {
		return nil, domain.Errorf(domain.CodeCapabilityInvalid, "capability %s is not in the library", ref)
	}
	if !l.Sealed {
		return nil, domain.Errorf(domain.CodeCapabilityInvalid, "capability %s is a draft (not sealed)", ref)
	}
	return l, nil
}

// LookupPinned returns the sealed file whose content hash is pin; it must
// carry ref (id@version, or the id of a draft's bare reference). A file
// for ref with other content is refused as CONTENT_HASH_MISMATCH, naming
// the file and both hashes, and so is a file for ref edited since it was
// sealed.
func (lib *DirLibrary) LookupPinned(ref, pin string) (*capability.Loaded, error) {
	if l, ok := lib.byHash[pin]; ok {
		if !carries(l, ref) {
			return nil, domain.Errorf(domain.CodeHashMismatch, "%s is pinned to %s, but %s holds that content as %s", ref, pin, l.File, l.Capability.Ref())
		}
		return l, nil
	}
	if l, ok := lib.byRef[ref]; ok {
		return nil, domain.Errorf(domain.CodeHashMismatch, "%s is pinned to %s, but %s holds %s", ref, pin, l.File, l.Hash)
	}
	if e, ok := lib.edited[ref]; ok {
		return nil, domain.Errorf(domain.CodeHashMismatch, "%s is pinned to %s, but %s was edited after it was sealed: it declares %s and its content hashes to %s",
			ref, pin, e.File, e.Declared, e.Computed)
	}
	return nil, domain.Errorf(domain.CodeCapabilityInvalid, "capability %s (%s) is not in the library", ref, pin)
}

// carries reports whether l is the capability ref names: its id@version,
// or its id for a bare ref.
func carries(l *capability.Loaded, ref string) bool {
	if strings.Contains(ref, "@") {
		return l.Capability.Ref() == ref
	}
	return l.Capability.ID == ref
}

func semverLess(a, b string) bool {
	ma, pa, _ := strings.Cut(strings.SplitN(a, "+", 2)[0], "-")
	mb, pb, _ := strings.Cut(strings.SplitN(b, "+", 2)[0], "-")
	as, bs := strings.Split(ma, "."), strings.Split(mb, ".")
	for i := 0; i < 3 && i < len(as) && i < len(bs); i++ {
		var x, y int
		fmt.Sscan(as[i], &x)
		fmt.Sscan(bs[i], &y)
		if x != y {
			return x < y
		}
	}
	// A release ranks above its prereleases (semver 2.0.0, item 11).
	switch {
	case pa == pb:
		return false
	case pa == "":
		return false
	case pb == "":
		return true
	}
	ia, ib := strings.Split(pa, "."), strings.Split(pb, ".")
	for i := 0; i < len(ia) && i < len(ib); i++ {
		x, errx := strconv.Atoi(ia[i])
		y, erry := strconv.Atoi(ib[i])
		switch {
		case errx == nil && erry == nil && x != y:
			return x < y
		case errx == nil && erry != nil:
			return true
		case errx != nil && erry == nil:
			return false
		case errx != nil && erry != nil && ia[i] != ib[i]:
			return ia[i] < ib[i]
		}
	}
	return len(ia) < len(ib)
}
