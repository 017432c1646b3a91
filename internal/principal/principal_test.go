package principal_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// clock is a settable clock safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// bed is one test's real SQLite store and a directory over it.
type bed struct {
	ctx   context.Context
	st    store.Store
	dir   *principal.Directory
	clock *clock
}

var root = principal.Principal{Name: "root@host"}

func newBed(t *testing.T) *bed {
	t.Helper()
	c := &clock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(t.Context(), t.TempDir()+"/cua.db", store.Config{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &bed{ctx: t.Context(), st: st, dir: principal.NewDirectory(st, c.Now), clock: c}
}

func (b *bed) add(t *testing.T, by principal.Principal, name string, role principal.Role) string {
	t.Helper()
	tok, err := b.dir.Add(b.ctx, by, name, role)
	if err != nil {
		t.Fatalf("Add(%s): %v", name, err)
	}
	return tok
}

func TestAddAuthenticate(t *testing.T) {
	b := newBed(t)
	tok := b.add(t, root, "alice", principal.Approver)
	if name, ok := principal.ParseToken(tok); !ok || name != "alice" || len(tok) != len("cuap_alice_")+64 {
		t.Fatalf("token %q: ParseToken = %q, %v; want cuap_alice_<64 hex>", tok, name, ok)
	}
	p, err := b.dir.Authenticate(b.ctx, tok)
	if err != nil || p != (principal.Principal{Name: "alice", Role: principal.Approver, Verified: true}) || p.String() != "alice" {
		t.Fatalf("Authenticate = %+v, %v; want verified approver alice", p, err)
	}
	rec, err := b.st.GetPrincipal(b.ctx, "alice")
	if err != nil || !strings.HasPrefix(rec.SecretHash, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(rec.SecretHash, tok[11:]) {
		t.Fatalf("stored hash %q, %v: want an argon2id PHC string without the secret", rec.SecretHash, err)
	}
	if rec.CreatedBy != "root@host (unverified)" || rec.Role != "approver" {
		t.Fatalf("record = %+v, want created by root@host (unverified)", rec)
	}
	for _, bad := range []string{"", "garbage", "cuap_alice_" + strings.Repeat("g", 64), "cuap_alice_" + strings.Repeat("A", 64),
		"cuap_nobody_" + strings.Repeat("a", 64), "cuap_Alice_" + tok[11:], tok + "0"} {
		if _, err := b.dir.Authenticate(b.ctx, bad); !errors.Is(err, principal.ErrBadToken) {
			t.Errorf("Authenticate(%q) = %v, want ErrBadToken", bad, err)
		}
	}
	if _, err := b.dir.Add(b.ctx, root, "alice", principal.Operator); !errors.Is(err, store.ErrExists) {
		t.Errorf("adding alice twice: %v, want ErrExists", err)
	}
	if _, err := b.dir.Add(b.ctx, root, "carol", "boss"); err == nil || !strings.Contains(err.Error(), `role "boss"`) {
		t.Errorf("unknown role: %v, want an error naming the role", err)
	}
	if p, err := b.dir.CLI(b.ctx, "", "root@host"); err != nil || p.String() != "root@host (unverified)" || p.Verified {
		t.Errorf("CLI without a token = %+v, %v; want root@host (unverified)", p, err)
	}
	if p, err := b.dir.CLI(b.ctx, tok, "root@host"); err != nil || p.String() != "alice" {
		t.Errorf("CLI with alice's token = %+v, %v; want alice", p, err)
	}
	if _, err := b.dir.CLI(b.ctx, "cuap_alice_"+strings.Repeat("0", 64), "root@host"); !errors.Is(err, principal.ErrBadToken) {
		t.Errorf("CLI with a wrong token = %v, want ErrBadToken (never a fallback)", err)
	}
	if _, err := b.dir.CLI(b.ctx, "", "root\n@host"); err == nil {
		t.Error("CLI accepted an OS user with a newline")
	}
}

func TestLockout(t *testing.T) {
	b := newBed(t)
	tok := b.add(t, root, "alice", principal.Approver)
	wrong := "cuap_alice_" + strings.Repeat("0", 64)
	// One success caches the right token; the lock must still refuse it.
	if _, err := b.dir.Authenticate(b.ctx, tok); err != nil {
		t.Fatal(err)
	}
	for i := range principal.MaxFailures {
		_, err := b.dir.Authenticate(b.ctx, wrong)
		if !errors.Is(err, principal.ErrBadToken) {
			t.Fatalf("wrong secret %d: %v, want ErrBadToken", i+1, err)
		}
	}
	_, err := b.dir.Authenticate(b.ctx, tok)
	if !errors.Is(err, principal.ErrLocked) || !strings.Contains(err.Error(), "until 2026-05-01T09:15:00Z") {
		t.Fatalf("right token after %d failures: %v, want ErrLocked until 09:15", principal.MaxFailures, err)
	}
	b.clock.Advance(principal.LockFor - time.Second)
	if _, err := b.dir.Authenticate(b.ctx, tok); !errors.Is(err, principal.ErrLocked) {
		t.Fatalf("a second before the lock ends: %v, want ErrLocked", err)
	}
	b.clock.Advance(time.Second)
	if p, err := b.dir.Authenticate(b.ctx, tok); err != nil || p.Name != "alice" {
		t.Fatalf("after the lock: %+v, %v; want alice", p, err)
	}
	// Failures that a success interrupts do not add up.
	for range principal.MaxFailures - 1 {
		b.dir.Authenticate(b.ctx, wrong) //nolint:errcheck // counted, not checked
	}
	b.clock.Advance(2 * time.Minute) // past the cache, so the store is asked again
	if _, err := b.dir.Authenticate(b.ctx, tok); err != nil {
		t.Fatal(err)
	}
	if rec, _ := b.st.GetPrincipal(b.ctx, "alice"); rec.FailedSignIns != 0 {
		t.Fatalf("a success left %d failures", rec.FailedSignIns)
	}
	if _, err := b.dir.Authenticate(b.ctx, wrong); !errors.Is(err, principal.ErrBadToken) {
		t.Fatal(err)
	}
	if _, err := b.dir.Authenticate(b.ctx, tok); err != nil {
		t.Fatalf("one failure after a success locked alice: %v", err)
	}
}

func TestDisableAndRotate(t *testing.T) {
	b := newBed(t)
	tok := b.add(t, root, "bob", principal.Operator)
	if _, err := b.dir.Authenticate(b.ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := b.dir.Disable(b.ctx, root, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.dir.Authenticate(b.ctx, tok); !errors.Is(err, principal.ErrDisabled) {
		t.Fatalf("disabled bob: %v, want ErrDisabled", err)
	}
	// Another process (another directory) trusted bob's token a moment ago:
	// it stops working once its cache entry ends, within a minute.
	carol := b.add(t, root, "carol", principal.Operator)
	other := principal.NewDirectory(b.st, b.clock.Now)
	if _, err := other.Authenticate(b.ctx, carol); err != nil {
		t.Fatal(err)
	}
	if err := b.dir.Disable(b.ctx, root, "carol"); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Minute)
	if _, err := other.Authenticate(b.ctx, carol); !errors.Is(err, principal.ErrDisabled) {
		t.Fatalf("a minute after carol was disabled elsewhere: %v, want ErrDisabled", err)
	}
	dave := b.add(t, root, "dave", principal.Approver)
	if _, err := b.dir.Authenticate(b.ctx, dave); err != nil {
		t.Fatal(err)
	}
	fresh, err := b.dir.Rotate(b.ctx, root, "dave")
	if err != nil || fresh == dave {
		t.Fatalf("Rotate = %q, %v; want a new token", fresh, err)
	}
	if _, err := b.dir.Authenticate(b.ctx, dave); !errors.Is(err, principal.ErrBadToken) {
		t.Fatalf("dave's old token after rotation: %v, want ErrBadToken", err)
	}
	if p, err := b.dir.Authenticate(b.ctx, fresh); err != nil || p.Name != "dave" {
		t.Fatalf("dave's new token: %+v, %v", p, err)
	}
	if _, err := b.dir.Rotate(b.ctx, root, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rotating nobody: %v, want ErrNotFound", err)
	}
	if err := b.dir.Disable(b.ctx, root, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("disabling nobody: %v, want ErrNotFound", err)
	}
}

func TestUnsafeNamesRefused(t *testing.T) {
	b := newBed(t)
	for _, name := range []string{"a\nb", "\x1b[31m", "Alice", "", strings.Repeat("a", 41), "1abc", "a b", "a_b", "é"} {
		_, err := b.dir.Add(b.ctx, root, name, principal.Operator)
		if err == nil || !strings.Contains(err.Error(), "^[a-z][a-z0-9.-]{0,39}$") {
			t.Errorf("Add(%q) = %v, want an error naming the rule", name, err)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("Add(%q): the error carries the raw control characters: %q", name, err)
		}
	}
	if all, err := b.st.ListPrincipals(b.ctx); err != nil || len(all) != 0 {
		t.Fatalf("refused names were stored: %+v, %v", all, err)
	}
	if err := principal.CheckName(strings.Repeat("a", 40)); err != nil {
		t.Errorf("a 40-character name: %v", err)
	}
	for s, ok := range map[string]bool{
		"alice": true, "root@host (unverified)": true, "ci-bot.prod": true,
		"alice (unverified)x": false, "root@host": false, "revoked by security\nx": false,
		"r\x1b[0m@h (unverified)": false, "Alice": false, " (unverified)": false,
	} {
		if err := principal.CheckString(s); (err == nil) != ok {
			t.Errorf("CheckString(%q) = %v, want ok=%v", s, err, ok)
		}
	}
	if got := principal.CleanOSUser("ro\not", "h\x1bst"); got != "ro_ot@h_st" || principal.CheckOSUser(got) != nil {
		t.Errorf("CleanOSUser = %q", got)
	}
}

func TestBootstrapAndRoles(t *testing.T) {
	b := newBed(t)
	// No admin yet: anyone with the database adds, even an operator.
	b.add(t, root, "olga", principal.Operator)
	adminTok := b.add(t, root, "ada", principal.Admin)
	admin, err := b.dir.Authenticate(b.ctx, adminTok)
	if err != nil {
		t.Fatal(err)
	}
	opTok := b.add(t, admin, "oscar", principal.Operator)
	op, err := b.dir.Authenticate(b.ctx, opTok)
	if err != nil {
		t.Fatal(err)
	}
	for _, by := range []principal.Principal{root, op, {Name: "ada", Role: principal.Admin}} {
		if _, err := b.dir.Add(b.ctx, by, "eve", principal.Admin); !errors.Is(err, principal.ErrForbidden) || !strings.Contains(err.Error(), "admin") {
			t.Errorf("Add by %s once an admin exists: %v, want ErrForbidden naming admin", by, err)
		}
		if err := b.dir.Disable(b.ctx, by, "ada"); !errors.Is(err, principal.ErrForbidden) {
			t.Errorf("Disable by %s: %v, want ErrForbidden", by, err)
		}
		if _, err := b.dir.Rotate(b.ctx, by, "ada"); !errors.Is(err, principal.ErrForbidden) {
			t.Errorf("Rotate by %s: %v, want ErrForbidden", by, err)
		}
	}
	if _, err := b.st.GetPrincipal(b.ctx, "eve"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a forbidden add stored eve: %v", err)
	}
	if rec, _ := b.st.GetPrincipal(b.ctx, "oscar"); rec.CreatedBy != "ada" {
		t.Errorf("oscar created by %q, want ada", rec.CreatedBy)
	}
	if err := b.dir.Disable(b.ctx, admin, "olga"); err != nil {
		t.Fatal(err)
	}
	all, err := b.dir.List(b.ctx)
	if err != nil || len(all) != 3 || all[0].Name != "ada" || all[1].DisabledAt.IsZero() {
		t.Fatalf("List = %+v, %v; want ada, olga (disabled), oscar", all, err)
	}
}

// TestReservedName: nobody can become the serve token's service
// principal, whose name the jobs API records for it.
func TestReservedName(t *testing.T) {
	b := newBed(t)
	if _, err := b.dir.Add(b.ctx, root, "serve-token", principal.Admin); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("add serve-token: %v, want reserved", err)
	}
}
