package toolspec

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/store"
)

// Source is the catalog as the tool specs read it (*catalog.Catalog).
type Source interface {
	List(ctx context.Context, id string) ([]store.Version, error)
	Show(ctx context.Context, ref string) (*catalog.Detail, error)
	Resolve(ctx context.Context, ref string) (*capability.Loaded, store.Version, error)
}

var _ Source = (*catalog.Catalog)(nil)

// ErrNotApproved refuses a reference with no usable approval.
var ErrNotApproved = errors.New("not approved")

// Approved returns the specs of approved capabilities, sorted by tool
// name. A version is approved when it verifies (sealed, its bytes hash to
// its content hash) and holds an approval of exactly that content that is
// usable at now: not revoked, not expired, not a consumed one-off.
//
// With no refs it returns, for every capability id, the highest approved
// version. Each ref ("id", "id@version", "sha256:…") must name an
// approved version (a bare id its highest approved version): one that does
// not is an error naming it that matches ErrNotApproved. Two specs with
// one tool name are refused (see [CheckNames]).
func Approved(ctx context.Context, src Source, now time.Time, refs []string) ([]*Spec, error) {
	if len(refs) == 0 {
		all, err := src.List(ctx, "")
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, v := range all {
			if !seen[v.CapabilityID] {
				seen[v.CapabilityID] = true
				refs = append(refs, v.CapabilityID)
			}
		}
		specs, err := collect(ctx, src, now, refs, true)
		if err != nil {
			return nil, err
		}
		return specs, CheckNames(specs)
	}
	specs, err := collect(ctx, src, now, refs, false)
	if err != nil {
		return nil, err
	}
	return specs, CheckNames(specs)
}

func collect(ctx context.Context, src Source, now time.Time, refs []string, skipUnapproved bool) ([]*Spec, error) {
	var specs []*Spec
	for _, ref := range refs {
		s, err := approvedSpec(ctx, src, now, ref)
		if errors.Is(err, ErrNotApproved) && skipUnapproved {
			continue
		}
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// approvedSpec is the spec of the approved version ref names.
func approvedSpec(ctx context.Context, src Source, now time.Time, ref string) (*Spec, error) {
	candidates := []string{ref}
	if !strings.Contains(ref, "@") && !strings.HasPrefix(ref, capability.HashPrefix) {
		vs, err := src.List(ctx, ref)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			return nil, fmt.Errorf("capability %s: %w", ref, store.ErrNotFound)
		}
		candidates = candidates[:0]
		for _, v := range sortVersions(vs) {
			candidates = append(candidates, v.Ref())
		}
	}
	for _, c := range candidates {
		d, err := src.Show(ctx, c)
		if err != nil {
			return nil, err
		}
		usable := Usable(d, now)
		if len(usable) == 0 {
			continue
		}
		l, _, err := src.Resolve(ctx, c)
		if err != nil {
			return nil, err
		}
		return New(l, usable)
	}
	return nil, fmt.Errorf("capability %s: %w: no usable approval (cua catalog approve %s)", ref, ErrNotApproved, ref)
}

// Usable returns the approvals of d usable at now; none when d's version
// does not verify.
func Usable(d *catalog.Detail, now time.Time) []store.Approval {
	if d.Integrity != catalog.IntegritySealed {
		return nil
	}
	var out []store.Approval
	for _, a := range d.Approvals {
		switch {
		case a.ContentHash != d.Version.ContentHash, !a.RevokedAt.IsZero(), a.ConsumedBy != "",
			!a.ExpiresAt.IsZero() && !a.ExpiresAt.After(now):
			continue
		}
		out = append(out, a)
	}
	return out
}

// sortVersions orders vs highest semantic version first.
func sortVersions(vs []store.Version) []store.Version {
	out := append([]store.Version(nil), vs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && semverLess(out[j-1].Version, out[j].Version); j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// semverLess orders by major, minor and patch, a release above its
// pre-releases, and anything else as text.
func semverLess(a, b string) bool {
	pa, prea := semver(a)
	pb, preb := semver(b)
	if pa == nil || pb == nil {
		return a < b
	}
	for i := range 3 {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	switch {
	case prea == preb:
		return a < b
	case prea == "":
		return false
	case preb == "":
		return true
	}
	return prea < preb
}

func semver(v string) ([]int, string) {
	core, _, _ := strings.Cut(v, "+")
	core, pre, _ := strings.Cut(core, "-")
	fs := strings.Split(core, ".")
	if len(fs) != 3 {
		return nil, ""
	}
	out := make([]int, 3)
	for i, f := range fs {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, ""
		}
		out[i] = n
	}
	return out, pre
}
