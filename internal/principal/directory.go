package principal

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// Lockout: MaxFailures failed sign-ins in a row lock a name for LockFor.
const (
	MaxFailures = 5
	LockFor     = 15 * time.Minute
)

// Cache bounds: a verified token is trusted for cacheTTL without asking
// the store or argon2 again; at most cacheMax tokens are remembered.
const (
	cacheTTL = time.Minute
	cacheMax = 256
)

// Directory is the principals of one store, with a clock and a small
// cache of verified tokens. Safe for concurrent use.
//
// The cache keeps the SHA-256 digest of each verified token (never the
// token) with its principal for about a minute, so an API that checks a
// token on every request does not pay argon2id each time. Disabling or
// rotating a principal, or locking it after failed sign-ins, through this
// Directory drops its cached tokens at once; done by another process (or
// another Directory), a disabled or rotated principal's token keeps working
// here until its cache entry ends, at most one minute later.
type Directory struct {
	st  store.Store
	now func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cached
}

// cached is one verified token's principal and when it must be checked
// again.
type cached struct {
	p       Principal
	expires time.Time
}

// NewDirectory returns the directory over st; now nil is time.Now.
func NewDirectory(st store.Store, now func() time.Time) *Directory {
	if now == nil {
		now = time.Now
	}
	return &Directory{st: st, now: now, cache: map[[sha256.Size]byte]cached{}}
}

// Add adds the principal name with role, created by by, and returns its
// token: the only time the token is shown (only its hash is stored). Once
// an active admin exists, by must be a verified admin (ErrForbidden);
// before that anyone with the database may add (bootstrap), and the
// record names who did.
func (d *Directory) Add(ctx context.Context, by Principal, name string, role Role) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	if slices.Contains(Reserved, name) {
		return "", fmt.Errorf("principal name %q: reserved for cua's own service principal", name)
	}
	if err := CheckRole(role); err != nil {
		return "", err
	}
	if err := d.gate(ctx, by, "add principal "+name); err != nil {
		return "", err
	}
	token, hash, err := newSecret(name)
	if err != nil {
		return "", err
	}
	_, err = d.st.AddPrincipal(ctx, store.PrincipalRecord{Name: name, Role: string(role), SecretHash: hash,
		CreatedAt: d.now(), CreatedBy: by.String()})
	if err != nil {
		return "", fmt.Errorf("add principal %s: %w", name, err)
	}
	return token, nil
}

// Authenticate checks a token (argon2id against the stored hash; a
// verified token is cached about a minute, see [Directory]). A wrong
// secret for an existing name counts a failure; MaxFailures failures in a
// row lock the name for LockFor (ErrLocked, even with the right token);
// success resets the count. An unknown name or garbage is ErrBadToken, a
// disabled principal ErrDisabled.
func (d *Directory) Authenticate(ctx context.Context, token string) (Principal, error) {
	name, ok := ParseToken(token)
	if !ok {
		return Principal{}, fmt.Errorf("%w: not of the form cuap_<name>_<64 hex>", ErrBadToken)
	}
	key := sha256.Sum256([]byte(token))
	now := d.now()
	if p, ok := d.lookup(key, now); ok {
		return p, nil
	}
	rec, err := d.st.GetPrincipal(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, fmt.Errorf("%w: no principal %s", ErrBadToken, name)
	} else if err != nil {
		return Principal{}, fmt.Errorf("authenticate %s: %w", name, err)
	}
	if err := usable(rec, now); err != nil {
		return Principal{}, err
	}
	good, err := verifySecret(token, rec.SecretHash)
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate %s: %w", name, err)
	}
	if !good {
		rec, err := d.st.NoteSignIn(ctx, name, false, MaxFailures, LockFor)
		if err != nil {
			return Principal{}, fmt.Errorf("authenticate %s: %w", name, err)
		}
		if rec.LockedUntil.After(now) {
			d.forget(name)
			return Principal{}, fmt.Errorf("%w: wrong secret for %s; %d failures in a row lock it until %s", ErrBadToken,
				name, MaxFailures, rec.LockedUntil.UTC().Format(time.RFC3339))
		}
		return Principal{}, fmt.Errorf("%w: wrong secret for %s", ErrBadToken, name)
	}
	if rec.FailedSignIns > 0 {
		if _, err := d.st.NoteSignIn(ctx, name, true, MaxFailures, LockFor); err != nil {
			return Principal{}, fmt.Errorf("authenticate %s: %w", name, err)
		}
	}
	p := Principal{Name: rec.Name, Role: Role(rec.Role), Verified: true}
	if err := CheckRole(p.Role); err != nil {
		return Principal{}, fmt.Errorf("authenticate %s: stored %w", name, err)
	}
	d.remember(key, p, now)
	return p, nil
}

// usable refuses a disabled principal, or one locked at now.
func usable(rec store.PrincipalRecord, now time.Time) error {
	if !rec.DisabledAt.IsZero() {
		return fmt.Errorf("%w: %s since %s", ErrDisabled, rec.Name, rec.DisabledAt.UTC().Format(time.RFC3339))
	}
	if rec.LockedUntil.After(now) {
		return fmt.Errorf("%w: %s after %d failed sign-ins, until %s", ErrLocked, rec.Name, MaxFailures,
			rec.LockedUntil.UTC().Format(time.RFC3339))
	}
	return nil
}

// List returns every principal, ordered by name (hashes included: the
// caller prints what it needs).
func (d *Directory) List(ctx context.Context) ([]store.PrincipalRecord, error) {
	return d.st.ListPrincipals(ctx)
}

// Disable disables the principal name: its token stops working (see
// [Directory] for the cache). Needs a verified admin once one exists.
func (d *Directory) Disable(ctx context.Context, by Principal, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := d.gate(ctx, by, "disable principal "+name); err != nil {
		return err
	}
	if _, err := d.st.DisablePrincipal(ctx, name); err != nil {
		return missing("disable principal", name, err)
	}
	d.forget(name)
	return nil
}

// Rotate gives the principal name a new token, returned once; the old one
// stops working, and failed sign-ins and a lock are cleared. Needs a
// verified admin once one exists.
func (d *Directory) Rotate(ctx context.Context, by Principal, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	if err := d.gate(ctx, by, "rotate principal "+name); err != nil {
		return "", err
	}
	token, hash, err := newSecret(name)
	if err != nil {
		return "", err
	}
	if _, err := d.st.UpdatePrincipalSecret(ctx, name, hash); err != nil {
		return "", missing("rotate principal", name, err)
	}
	d.forget(name)
	return token, nil
}

// CLI resolves who runs a command: a non-empty token must authenticate
// (its error otherwise, never a fallback); an empty one gives {Name:
// osUser, Verified: false}, osUser being user@host as CleanOSUser spells
// it.
func (d *Directory) CLI(ctx context.Context, token, osUser string) (Principal, error) {
	if token != "" {
		return d.Authenticate(ctx, token)
	}
	if err := CheckOSUser(osUser); err != nil {
		return Principal{}, err
	}
	return Principal{Name: osUser}, nil
}

// gate lets by manage principals: a verified admin, or anyone while no
// active admin exists (bootstrap).
func (d *Directory) gate(ctx context.Context, by Principal, what string) error {
	if by.Can(Admin) {
		return nil
	}
	all, err := d.st.ListPrincipals(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for _, p := range all {
		if Role(p.Role) == Admin && p.DisabledAt.IsZero() {
			return fmt.Errorf("%s: %w: needs a verified admin (CUA_PRINCIPAL_TOKEN of an admin), not %s", what, ErrForbidden, by)
		}
	}
	return nil
}

// newSecret returns a fresh token for name and its hash.
func newSecret(name string) (token, hash string, err error) {
	if token, err = newToken(name); err != nil {
		return "", "", err
	}
	if hash, err = hashSecret(token); err != nil {
		return "", "", err
	}
	return token, hash, nil
}

// lookup returns the cached principal of a token digest until it expires.
func (d *Directory) lookup(key [sha256.Size]byte, now time.Time) (Principal, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.cache[key]
	if !ok || !now.Before(c.expires) {
		delete(d.cache, key)
		return Principal{}, false
	}
	return c.p, true
}

// remember caches a verified token's digest, dropping expired entries (and
// then any one) when the cache is full.
func (d *Directory) remember(key [sha256.Size]byte, p Principal, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.cache) >= cacheMax {
		for k, c := range d.cache {
			if !now.Before(c.expires) {
				delete(d.cache, k)
			}
		}
		for k := range d.cache {
			if len(d.cache) < cacheMax {
				break
			}
			delete(d.cache, k)
		}
	}
	d.cache[key] = cached{p: p, expires: now.Add(cacheTTL)}
}

// forget drops every cached token of name.
func (d *Directory) forget(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, c := range d.cache {
		if c.p.Name == name {
			delete(d.cache, k)
		}
	}
}

// missing says a principal the store does not hold is missing, and what
// lists the ones there are; other errors are wrapped with op.
func missing(op, name string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &store.NotFoundError{What: "principal " + name, Reason: "no such principal", Fix: "cua users list"}
	}
	return fmt.Errorf("%s %s: %w", op, name, err)
}
