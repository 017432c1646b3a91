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

// DirLibrary serves the sealed capabilities of one directory.
type DirLibrary struct {
	byRef map[string]*capability.Loaded
	byID  map[string]*capability.Loaded
}

// LoadDir loads every *.yaml, *.yml and *.json capability in dir. Files that
// do not load are skipped and reported only when looked up.
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
		lib.Add(l)
	}
	return lib, nil
}

// Add puts l in the library; for a bare id the highest version wins.
func (lib *DirLibrary) Add(l *capability.Loaded) {
	c := l.Capability
	lib.byRef[c.Ref()] = l
	if cur, ok := lib.byID[c.ID]; !ok || semverLess(cur.Capability.Version, c.Version) {
		lib.byID[c.ID] = l
	}
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
