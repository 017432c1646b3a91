package storetest

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// principal returns a principal fixture; the hash is opaque to the store.
func principal(name, role string) store.PrincipalRecord {
	return store.PrincipalRecord{Name: name, Role: role, SecretHash: "hash-of-" + name, CreatedBy: "root@host (unverified)"}
}

// mustPrincipal adds p and fails the test on error.
func mustPrincipal(t *testing.T, b bundle, p store.PrincipalRecord) store.PrincipalRecord {
	t.Helper()
	got, err := b.st.AddPrincipal(b.ctx, p)
	if err != nil {
		t.Fatalf("AddPrincipal(%s): %v", p.Name, err)
	}
	return got
}

func testPrincipals(t *testing.T, h Harness) {
	b := setup(t, h)
	mustPrincipal(t, b, principal("bob", "approver"))
	b.clock.Advance(time.Second)
	mustPrincipal(t, b, principal("alice", "admin"))
	got, err := b.st.GetPrincipal(b.ctx, "bob")
	want := principal("bob", "approver")
	want.CreatedAt = epoch
	if err != nil || got != want {
		t.Fatalf("GetPrincipal = %+v, %v; want %+v", got, err, want)
	}
	all, err := b.st.ListPrincipals(b.ctx)
	if err != nil || len(all) != 2 || all[0].Name != "alice" || all[1].Name != "bob" {
		t.Fatalf("ListPrincipals = %+v, %v; want alice then bob", all, err)
	}
	for _, tt := range []struct {
		name string
		p    store.PrincipalRecord
		want error
		says string
	}{
		{"taken", principal("bob", "operator"), store.ErrExists, "bob"},
		{"no name", principal("", "operator"), store.ErrInvalid, "name"},
		{"no role", principal("carl", ""), store.ErrInvalid, "role"},
		{"no hash", func() store.PrincipalRecord { p := principal("carl", "admin"); p.SecretHash = ""; return p }(), store.ErrInvalid, "secret hash"},
		{"no creator", func() store.PrincipalRecord { p := principal("carl", "admin"); p.CreatedBy = ""; return p }(), store.ErrInvalid, "created by"},
		{"born locked", func() store.PrincipalRecord { p := principal("carl", "admin"); p.LockedUntil = epoch; return p }(), store.ErrInvalid, "locked"},
	} {
		if _, err := b.st.AddPrincipal(b.ctx, tt.p); !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: err = %v, want %v naming %q", tt.name, err, tt.want, tt.says)
		}
	}
	if got, _ := b.st.GetPrincipal(b.ctx, "bob"); got.Role != "approver" {
		t.Fatalf("a refused add changed bob: %+v", got)
	}
	b.clock.Advance(time.Minute)
	disabledAt := b.clock.Now()
	if p, err := b.st.DisablePrincipal(b.ctx, "bob"); err != nil || !p.DisabledAt.Equal(disabledAt) {
		t.Fatalf("DisablePrincipal = %+v, %v; want disabled at %s", p, err, disabledAt)
	}
	b.clock.Advance(time.Minute)
	if p, err := b.st.DisablePrincipal(b.ctx, "bob"); err != nil || !p.DisabledAt.Equal(disabledAt) {
		t.Fatalf("disabling twice = %+v, %v; want the first time kept", p, err)
	}
	for name, err := range map[string]error{
		"get":     func() error { _, err := b.st.GetPrincipal(b.ctx, "nobody"); return err }(),
		"disable": func() error { _, err := b.st.DisablePrincipal(b.ctx, "nobody"); return err }(),
		"secret":  func() error { _, err := b.st.UpdatePrincipalSecret(b.ctx, "nobody", "h"); return err }(),
		"sign-in": func() error { _, err := b.st.NoteSignIn(b.ctx, "nobody", false, 5, time.Minute); return err }(),
	} {
		if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "nobody") {
			t.Errorf("%s of an absent principal: err = %v, want ErrNotFound naming it", name, err)
		}
	}
	if _, err := b.st.UpdatePrincipalSecret(b.ctx, "alice", ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("empty secret hash: err = %v, want ErrInvalid", err)
	}
}

func testNoteSignIn(t *testing.T, h Harness) {
	b := setup(t, h)
	mustPrincipal(t, b, principal("alice", "approver"))
	const lockFor = 15 * time.Minute
	note := func(ok bool) store.PrincipalRecord {
		t.Helper()
		p, err := b.st.NoteSignIn(b.ctx, "alice", ok, 5, lockFor)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for i := 1; i <= 3; i++ {
		if p := note(false); p.FailedSignIns != i || !p.LockedUntil.IsZero() {
			t.Fatalf("failure %d: %+v, want count %d and no lock", i, p, i)
		}
	}
	if p := note(true); p.FailedSignIns != 0 {
		t.Fatalf("a success left count %d, want 0", p.FailedSignIns)
	}
	for range 4 {
		note(false)
	}
	b.clock.Advance(time.Second)
	lockedAt := b.clock.Now()
	if p := note(false); p.FailedSignIns != 0 || !p.LockedUntil.Equal(lockedAt.Add(lockFor)) {
		t.Fatalf("fifth failure in a row: %+v, want count 0 and locked until %s", p, lockedAt.Add(lockFor))
	}
	if p := note(false); p.FailedSignIns != 1 || !p.LockedUntil.Equal(lockedAt.Add(lockFor)) {
		t.Fatalf("a failure after the lock: %+v, want count 1 and the lock kept", p)
	}
	if _, err := b.st.NoteSignIn(b.ctx, "alice", false, 0, lockFor); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("max failures 0: err = %v, want ErrInvalid", err)
	}
	p, err := b.st.UpdatePrincipalSecret(b.ctx, "alice", "new-hash")
	if err != nil || p.SecretHash != "new-hash" || p.FailedSignIns != 0 || !p.LockedUntil.IsZero() {
		t.Fatalf("UpdatePrincipalSecret = %+v, %v; want the new hash, no failures and no lock", p, err)
	}
}

// testNoteSignInConcurrent fails sign-ins from many goroutines at once:
// every failure is counted, and exactly the threshold locks.
func testNoteSignInConcurrent(t *testing.T, h Harness) {
	b := setup(t, h)
	mustPrincipal(t, b, principal("alice", "approver"))
	mustPrincipal(t, b, principal("bob", "approver"))
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for range n {
		wg.Go(func() {
			_, err := b.st.NoteSignIn(b.ctx, "alice", false, 1000, time.Minute)
			errs <- err
		})
		wg.Go(func() {
			_, err := b.st.NoteSignIn(b.ctx, "bob", false, n, time.Minute)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p, _ := b.st.GetPrincipal(b.ctx, "alice"); p.FailedSignIns != n {
		t.Fatalf("after %d concurrent failures alice's count = %d: a failure was lost", n, p.FailedSignIns)
	}
	if p, _ := b.st.GetPrincipal(b.ctx, "bob"); p.FailedSignIns != 0 || !p.LockedUntil.Equal(epoch.Add(time.Minute)) {
		t.Fatalf("after %d concurrent failures (the threshold) bob = %+v, want locked with count 0", n, p)
	}
}
