package catalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// LookupPinned resolves a pinned call by its content hash (the catalog
// holds one version per hash) and verifies the stored bytes; the version
// must carry ref exactly (id@version, or the id of a draft's bare
// reference). A version of ref stored with other content is refused as
// CONTENT_HASH_MISMATCH naming both hashes: a later version added beside
// it changes nothing, since the pin names the content that was approved.
func (l *Library) LookupPinned(ref, pin string) (*capability.Loaded, error) {
	got, v, err := l.c.Resolve(l.ctx, pin)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, l.notPinned(ref, pin)
	case err != nil:
		return nil, err
	case !carriesRef(v, ref):
		return nil, domain.Errorf(domain.CodeHashMismatch, "%s is pinned to %s, but the catalog holds that content as %s", ref, pin, v.Ref())
	}
	return got, nil
}

// resolveCall finds a call's capability: by its pin when it has one, else
// by ref.
func (l *Library) resolveCall(ref, pin string) (*capability.Loaded, error) {
	if pin == "" {
		return l.Lookup(ref)
	}
	return l.LookupPinned(ref, pin)
}

// notPinned explains why no version with content pin is stored for ref.
func (l *Library) notPinned(ref, pin string) error {
	if strings.Contains(ref, "@") {
		if v, err := l.c.lookup(l.ctx, ref); err == nil {
			return domain.Errorf(domain.CodeHashMismatch, "%s is pinned to %s, but the catalog holds %s for it", ref, pin, v.ContentHash)
		}
	}
	return domain.Errorf(domain.CodeCapabilityInvalid, "capability %s (%s) is not in the catalog", ref, pin)
}

// carriesRef reports whether v is the version ref names: its id@version,
// or its id for a bare ref.
func carriesRef(v store.Version, ref string) bool {
	if strings.Contains(ref, "@") {
		return v.Ref() == ref
	}
	return v.CapabilityID == ref
}

// checkPinned refuses a sealed file that calls a capability without
// pinning it (invariant 14), naming the file and each field.
func checkPinned(file string, l *capability.Loaded) error {
	if err := capability.CheckPinned(l.Capability); err != nil {
		return fmt.Errorf("%s: %w (cua capability seal --library DIR writes the pins into a draft)", file, err)
	}
	return nil
}
