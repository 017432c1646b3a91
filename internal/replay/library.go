package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// Library finds the capabilities a run may call (prerequisites and
// run_capability remedies) by "id" or "id@version".
type Library interface {
	Lookup(ref string) (*capability.Loaded, error)
}

// DirLibrary serves the sealed capabilities of one directory. It holds one
// file per id@version (invariant 14).
type DirLibrary struct {
	byRef map[string]*capability.Loaded
	byID  map[string]*capability.Loaded
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
// do not load are skipped and reported only when looked up; two files with
// the same id@version are refused, naming both.
func LoadDir(dir string) (*DirLibrary, error) {
	lib := &DirLibrary{byRef: map[string]*capability.Loaded{}, byID: map[string]*capability.Loaded{}}
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
		if err != nil {
			continue
		}
		if err := lib.Add(l); err != nil {
			return nil, err
		}
	}
	return lib, nil
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

// Preflight resolves every capability l may call (its prerequisites and
// run_capability remedies, and theirs), checks each is sealed and matches
// its pin, and refuses cycles. It runs before the surface is touched, so a
// missing or tampered sub-capability costs no browser and no dispatch.
func Preflight(l *capability.Loaded, lib Library) error {
	return preflight(l, lib, []string{l.Capability.ID})
}

func preflight(l *capability.Loaded, lib Library, stack []string) error {
	c := l.Capability
	type call struct{ ref, pin, where string }
	var calls []call
	for i, p := range c.Prerequisites {
		calls = append(calls, call{p.Capability, p.ContentHash, fmt.Sprintf("prerequisites[%d]", i)})
	}
	for i, rule := range c.Recovery {
		if rule.Remedy == domain.RemedyRunCapability {
			calls = append(calls, call{rule.Capability, rule.ContentHash, fmt.Sprintf("recovery[%d] (%s)", i, rule.ID)})
		}
	}
	for _, k := range calls {
		where := fmt.Sprintf("%s: %s", c.Ref(), k.where)
		if lib == nil {
			return domain.Errorf(domain.CodeCapabilityInvalid, "%s calls %s, but no capability library was given", where, k.ref)
		}
		id, _, _ := strings.Cut(k.ref, "@")
		for _, s := range stack {
			if s == id {
				return domain.Errorf(domain.CodeCapabilityInvalid, "%s calls %s, which is already running (%s)", where, k.ref, strings.Join(append(stack, id), " -> "))
			}
		}
		sub, err := lib.Lookup(k.ref)
		if err != nil {
			return domain.Errorf(domain.ErrorCode(err), "%s: %s", where, errMessage(err))
		}
		if k.pin != "" && sub.Hash != k.pin {
			return domain.Errorf(domain.CodeHashMismatch, "%s pins %s to %s, but %s holds %s", where, k.ref, k.pin, sub.File, sub.Hash)
		}
		if err := preflight(sub, lib, append(stack, id)); err != nil {
			return err
		}
	}
	return nil
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
