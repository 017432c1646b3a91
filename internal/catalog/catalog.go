package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// Config configures a Catalog.
type Config struct {
	Store store.Store
	// Now is the clock approvals and runs are stamped and checked with;
	// time.Now when nil.
	Now func() time.Time
	// NewID makes approval ids; a random id when nil.
	NewID func() string
	// User is the default approver (the OS user); required by Approve when
	// ApproveParams.Approver is empty.
	User func() string
}

// Catalog is what a team approves from: sealed capability versions, their
// approvals and the runs that used them, over a store.Store. It is safe
// for concurrent use when its store is.
type Catalog struct {
	st    store.Store
	now   func() time.Time
	newID func() string
	user  func() string
}

// New returns a Catalog over cfg.Store.
func New(cfg Config) (*Catalog, error) {
	if cfg.Store == nil {
		return nil, errors.New("catalog: store is required")
	}
	c := &Catalog{st: cfg.Store, now: cfg.Now, newID: cfg.NewID, user: cfg.User}
	if c.now == nil {
		c.now = time.Now
	}
	if c.newID == nil {
		c.newID = randomID
	}
	if c.user == nil {
		c.user = func() string { return "" }
	}
	return c, nil
}

// AddResult is the result of adding one file.
type AddResult struct {
	Version store.Version
	// Created is false when the same content was already stored under the
	// same id@version (adding is idempotent).
	Created bool
}

// Add stores the sealed capability in data (named file in messages). The
// content hash is recomputed, never trusted: a draft, an invalid file or a
// file whose content no longer matches its declared hash is refused, and so
// are a file that calls a capability without pinning it (a bare id, or an
// id@version without content_hash: invariant 14) and a different file
// under an id@version already stored (the error names both hashes and
// matches store.ErrImmutable).
func (c *Catalog) Add(ctx context.Context, file string, data []byte) (AddResult, error) {
	l, err := capability.ParseContext(ctx, file, data)
	if err != nil {
		return AddResult{}, err
	}
	if !l.Sealed {
		return AddResult{}, fmt.Errorf("%s: %s is a draft: seal it (cua capability seal) before adding it", file, l.Capability.Ref())
	}
	if err := checkPinned(file, l); err != nil {
		return AddResult{}, err
	}
	v, created, err := c.st.AddVersion(ctx, store.Version{CapabilityID: l.Capability.ID, Version: l.Capability.Version,
		ContentHash: l.Hash, Status: store.StatusSealed, Body: data})
	if err != nil {
		return AddResult{}, fmt.Errorf("%s: %w", file, err)
	}
	return AddResult{Version: v, Created: created}, nil
}

// AddFile reads the capability file at path (bounded, regular files only)
// and adds it (see Add).
func (c *Catalog) AddFile(ctx context.Context, path string) (AddResult, error) {
	data, err := capability.ReadBounded(path, capability.MaxFileSize)
	if err != nil {
		return AddResult{}, fmt.Errorf("read %s: %w", path, err)
	}
	return c.Add(ctx, path, data)
}

// List returns the stored versions (without bodies), of one capability when
// id is set.
func (c *Catalog) List(ctx context.Context, id string) ([]store.Version, error) {
	return c.st.ListVersions(ctx, store.VersionFilter{CapabilityID: id})
}

// Resolve finds the version ref names and loads it: "id@version", a content
// hash "sha256:…", or a bare "id" (its highest sealed version). The stored
// bytes are re-verified: a version whose bytes no longer hash to its stored
// content hash is refused as CONTENT_HASH_MISMATCH.
func (c *Catalog) Resolve(ctx context.Context, ref string) (*capability.Loaded, store.Version, error) {
	v, err := c.lookup(ctx, ref)
	if err != nil {
		return nil, store.Version{}, err
	}
	l, err := capability.ParseContext(ctx, v.Ref(), v.Body)
	if err != nil {
		return nil, v, err
	}
	if l.Hash != v.ContentHash {
		return nil, v, domain.Errorf(domain.CodeHashMismatch, "%s: stored bytes hash to %s, the catalog recorded %s", v.Ref(), l.Hash, v.ContentHash)
	}
	return l, v, nil
}

func (c *Catalog) lookup(ctx context.Context, ref string) (store.Version, error) {
	switch {
	case ref == "":
		return store.Version{}, errors.New("capability reference is empty: want ID, ID@VERSION or sha256:HASH")
	case strings.HasPrefix(ref, capability.HashPrefix):
		v, err := c.st.GetVersionByHash(ctx, ref)
		return v, wrapRef(ref, err)
	case strings.Contains(ref, "@"):
		id, ver, _ := strings.Cut(ref, "@")
		v, err := c.st.GetVersion(ctx, id, ver)
		return v, wrapRef(ref, err)
	}
	vs, err := c.st.ListVersions(ctx, store.VersionFilter{CapabilityID: ref, Status: store.StatusSealed})
	if err != nil {
		return store.Version{}, err
	}
	if len(vs) == 0 {
		return store.Version{}, &store.NotFoundError{What: ref, Reason: "no sealed version of this id in the catalog", Fix: "cua catalog list; cua catalog add FILE adds one"}
	}
	latest := vs[0]
	for _, v := range vs[1:] {
		if compareSemver(v.Version, latest.Version) > 0 {
			latest = v
		}
	}
	v, err := c.st.GetVersion(ctx, latest.CapabilityID, latest.Version)
	return v, wrapRef(ref, err)
}

// wrapRef names ref in err; a missing version says so and what lists the
// ones there are.
func wrapRef(ref string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		reason := "no such version in the catalog"
		if strings.HasPrefix(ref, capability.HashPrefix) {
			reason = "no version with this content hash in the catalog"
		}
		return &store.NotFoundError{What: ref, Reason: reason, Fix: "cua catalog list"}
	}
	if err != nil {
		return fmt.Errorf("capability %s: %w", ref, err)
	}
	return nil
}

// Integrity says whether a stored version still verifies.
type Integrity string

// Integrity values.
const (
	// IntegritySealed: the bytes parse and hash to the stored content hash.
	IntegritySealed Integrity = "sealed"
	// IntegrityTampered: the bytes do not parse or hash to something else.
	IntegrityTampered Integrity = "tampered"
	// IntegrityDraft: the version was stored without a sealed hash.
	IntegrityDraft Integrity = "draft"
)

// Detail is what Show reports about one version.
type Detail struct {
	Version   store.Version
	Integrity Integrity
	// Problem says why the version is tampered.
	Problem   string
	Approvals []store.Approval
	// Runs are the most recent runs of this content hash, newest first.
	Runs []store.Run
}

// ShowRuns is how many recent runs Show returns.
const ShowRuns = 10

// Show reports a version's integrity, its approvals and its last runs.
func (c *Catalog) Show(ctx context.Context, ref string) (*Detail, error) {
	v, err := c.lookup(ctx, ref)
	if err != nil {
		return nil, err
	}
	d := &Detail{Version: v, Integrity: IntegritySealed}
	l, perr := capability.ParseContext(ctx, v.Ref(), v.Body)
	switch {
	case v.Status == store.StatusDraft:
		d.Integrity = IntegrityDraft
	case perr != nil:
		d.Integrity, d.Problem = IntegrityTampered, perr.Error()
	case l.Hash != v.ContentHash:
		d.Integrity, d.Problem = IntegrityTampered, fmt.Sprintf("bytes hash to %s, recorded %s", l.Hash, v.ContentHash)
	}
	if d.Approvals, err = c.st.ListApprovals(ctx, store.ApprovalFilter{ContentHash: v.ContentHash}); err != nil {
		return nil, err
	}
	if d.Runs, err = c.st.ListRuns(ctx, store.RunFilter{ContentHash: v.ContentHash, Limit: ShowRuns}); err != nil {
		return nil, err
	}
	d.Version.Body = nil
	return d, nil
}

// DiffRefs resolves two references and returns their semantic difference,
// judging the risk of the capabilities each pins from the catalog (see
// DiffPinned).
func (c *Catalog) DiffRefs(ctx context.Context, refA, refB string) ([]Change, error) {
	a, _, err := c.Resolve(ctx, refA)
	if err != nil {
		return nil, err
	}
	b, _, err := c.Resolve(ctx, refB)
	if err != nil {
		return nil, err
	}
	return DiffPinned(a.Capability, b.Capability, func(ref, pin string) (domain.Risk, error) {
		l, err := c.Library(ctx).resolveCall(ref, pin)
		if err != nil {
			return "", err
		}
		return l.Capability.Risk, nil
	})
}

// AddOverlay applies o to the version baseRef names and stores the result
// as a sealed version of its own ("<version>+<tenant>", its own content
// hash), so that it is approved on its own.
func (c *Catalog) AddOverlay(ctx context.Context, baseRef string, o Overlay) (AddResult, error) {
	base, _, err := c.Resolve(ctx, baseRef)
	if err != nil {
		return AddResult{}, err
	}
	eff, err := o.Apply(base.Capability)
	if err != nil {
		return AddResult{}, err
	}
	if eff.ContentHash, err = capability.HashContext(ctx, eff); err != nil {
		return AddResult{}, fmt.Errorf("overlay %s: %w", eff.Ref(), err)
	}
	body, err := json.MarshalIndent(eff, "", "  ")
	if err != nil {
		return AddResult{}, fmt.Errorf("overlay %s: %w", eff.Ref(), err)
	}
	return c.Add(ctx, eff.Ref()+" (overlay)", append(body, '\n'))
}

// IsFile reports whether a capability argument names a file (it holds a
// path separator or ends in .yaml, .yml or .json) rather than a catalog
// reference.
func IsFile(arg string) bool {
	ext := strings.ToLower(filepath.Ext(arg))
	return strings.ContainsRune(arg, filepath.Separator) || ext == ".yaml" || ext == ".yml" || ext == ".json"
}
