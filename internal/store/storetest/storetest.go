// Package storetest is the conformance suite of the store port: every
// adapter (store/sqlite, store/postgres) runs [Run] against a fresh database
// per test and calls [HelperMain] first in its TestMain, so the suite can
// re-execute the test binary as a second writer process or as a process to
// kill in the middle of a write.
//
// It owns the suite's fixtures and expectations. It must never know which
// adapter it is testing (no adapter imports, no SQL), and never skip: a
// suite that cannot reach its database fails.
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// Harness tells the suite how to reach one adapter.
type Harness struct {
	// Fresh returns the address (a file path, a URL) of a new, empty
	// database for one test. It may be called from parallel tests.
	Fresh func(tb testing.TB) string
	// Open opens the store at addr, migrating it. The suite calls it in
	// this process and, with the same addr, in child processes.
	Open func(ctx context.Context, addr string, cfg store.Config) (store.Store, error)
}

// Run runs every conformance test against h, each in parallel on its own
// database.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"MigrateFromEmptyAndReopen", testMigrateReopen},
		{"VersionImmutable", testVersionImmutable},
		{"VersionInvalid", testVersionInvalid},
		{"ListVersions", testListVersions},
		{"AddApproval", testAddApproval},
		{"ApprovalActiveAndRevoke", testApprovalActive},
		{"ConsumeApproval", testConsumeApproval},
		{"ConsumeApprovalConcurrent", testConsumeConcurrent},
		{"Runs", testRuns},
		{"ListRunsFilters", testListRuns},
		{"IdempotencyKeyConcurrent", testIdempotencyConcurrent},
		{"CountEvalSuccesses", testCountEval},
		{"Leases", testLeases},
		{"Interventions", testInterventions},
		{"InterventionDetailAndRelease", testInterventionDetailAndRelease},
		{"JobKeys", testJobKeys},
		{"JobKeyConcurrent", testJobKeyConcurrent},
		{"SettleIntervention", testSettleIntervention},
		{"Principals", testPrincipals},
		{"NoteSignIn", testNoteSignIn},
		{"NoteSignInConcurrent", testNoteSignInConcurrent},
		{"TwoProcessWriters", testTwoProcesses},
		{"KillMidWrite", testKillMidWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, h)
		})
	}
}

// Clock is a settable clock safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// epoch is the suite's fixed start time.
var epoch = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// bundle is one test's store, clock and address.
type bundle struct {
	ctx   context.Context
	st    store.Store
	clock *Clock
	addr  string
}

// setup opens a fresh store with a fake clock, closed at cleanup.
func setup(t *testing.T, h Harness) bundle {
	t.Helper()
	addr := h.Fresh(t)
	return setupAt(t, h, addr)
}

func setupAt(t *testing.T, h Harness, addr string) bundle {
	t.Helper()
	clock := &Clock{t: epoch}
	ctx := t.Context()
	st, err := h.Open(ctx, addr, store.Config{Now: clock.Now})
	if err != nil {
		t.Fatalf("open %s: %v", addr, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return bundle{ctx: ctx, st: st, clock: clock, addr: addr}
}

// version returns a sealed version fixture whose hash and body derive from
// id, ver and salt.
func version(id, ver, salt string) store.Version {
	return store.Version{
		CapabilityID: id, Version: ver, Status: store.StatusSealed,
		ContentHash: fmt.Sprintf("sha256:%s-%s-%s", id, ver, salt),
		Body:        []byte(fmt.Sprintf("id: %s\nversion: %s\n# %s\n", id, ver, salt)),
	}
}

// mustAdd adds v and fails the test on error.
func mustAdd(t *testing.T, b bundle, v store.Version) store.Version {
	t.Helper()
	got, _, err := b.st.AddVersion(b.ctx, v)
	if err != nil {
		t.Fatalf("AddVersion(%s): %v", v.Ref(), err)
	}
	return got
}

// approval returns a standing approval of v.
func approval(id string, v store.Version) store.Approval {
	return store.Approval{ID: id, CapabilityID: v.CapabilityID, Version: v.Version, ContentHash: v.ContentHash,
		Approver: "alice", Note: "reviewed"}
}

// oneOff returns a one-off approval of v for exact inputs.
func oneOff(id string, v store.Version) store.Approval {
	a := approval(id, v)
	a.Once, a.Inputs = true, map[string]string{"amount": "250.00", "account": "ACC-1"}
	return a
}

// mustApprove adds a and fails the test on error.
func mustApprove(t *testing.T, b bundle, a store.Approval) store.Approval {
	t.Helper()
	got, err := b.st.AddApproval(b.ctx, a)
	if err != nil {
		t.Fatalf("AddApproval(%s): %v", a.ID, err)
	}
	return got
}
