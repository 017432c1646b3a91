package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
)

// schema6File is a database written by the store as it was before the SQL
// moved into store/sqlstore (commit 042b6c9, schema version 6, its own
// per-dialect migration files): [writeFixture] through that commit's
// sqlite.Open with [fixtureClock]. It is checked in so that the test below keeps
// proving what the code of that day wrote, not what today's code writes.
const schema6File = "testdata/schema6.db"

// fixtureStart is the fixture's clock at its first write.
var fixtureStart = time.Date(2026, 11, 30, 8, 15, 0, 123456000, time.UTC)

// fixtureClock is the fixture's clock: it stands still, so that a write
// stamps the same time however often it reads the clock.
func fixtureClock() time.Time { return fixtureStart }

// writeFixture writes one record of every kind, and every state change a
// record can go through, to st.
func writeFixture(ctx context.Context, st store.Store) error {
	v := store.Version{CapabilityID: "memberdesk.transfer", Version: "1.3.0", ContentHash: "sha256:aa11",
		Status: store.StatusSealed, Body: []byte("id: memberdesk.transfer\nversion: 1.3.0\n")}
	draft := store.Version{CapabilityID: "memberdesk.lookup", Version: "0.1.0", ContentHash: "sha256:bb22",
		Status: store.StatusDraft, Body: []byte{0, 1, 2, 0xff}}
	steps := []func() error{
		func() error { _, _, err := st.AddVersion(ctx, v); return err },
		func() error { _, _, err := st.AddVersion(ctx, draft); return err },
		func() error {
			_, err := st.AddApproval(ctx, store.Approval{ID: "ap-standing", CapabilityID: v.CapabilityID, Version: v.Version,
				ContentHash: v.ContentHash, Approver: "alice", Note: "reviewed", ExpiresAt: fixtureStart.Add(90 * 24 * time.Hour),
				Bounds: store.Bounds{Max: map[string]string{"amount": "500.00"}, Allowed: map[string][]string{"currency": {"EUR"}}}})
			return err
		},
		func() error {
			_, err := st.AddApproval(ctx, store.Approval{ID: "ap-once", CapabilityID: v.CapabilityID, Version: v.Version,
				ContentHash: v.ContentHash, Approver: "bob", Once: true, Inputs: map[string]string{"amount": "250.00"}})
			return err
		},
		func() error {
			_, err := st.AddApproval(ctx, store.Approval{ID: "ap-revoked", CapabilityID: v.CapabilityID, Version: v.Version,
				ContentHash: v.ContentHash, Approver: "alice"})
			return err
		},
		func() error { _, err := st.RevokeApproval(ctx, "ap-revoked", "carol"); return err },
		func() error {
			_, err := st.RecordRun(ctx, store.Run{ID: "r1", CapabilityID: v.CapabilityID, Version: v.Version,
				ContentHash: v.ContentHash, Status: "RUNNING", IdempotencyKey: "key-1", ApprovalID: "ap-once", InputsDigest: "dg1"})
			return err
		},
		func() error { _, err := st.ConsumeApproval(ctx, "ap-once", "r1"); return err },
		func() error {
			_, err := st.UpdateRun(ctx, store.Run{ID: "r1", Status: "SUCCESS", Outcome: "transferred",
				Effects: []byte(`{"posts":1}`), EndedAt: fixtureStart.Add(time.Hour), EvidencePath: "runs/r1",
				Outputs: []byte(`{"ref":"T-1"}`), ChainHead: "sha256:cc33", Signature: "sig"})
			return err
		},
		func() error {
			_, err := st.RecordRun(ctx, store.Run{ID: "r2", CapabilityID: v.CapabilityID, Version: v.Version,
				ContentHash: v.ContentHash, Status: "SUCCESS", Eval: true, FailureCode: "", UnauthorizedDispatches: 0})
			return err
		},
		func() error {
			_, err := st.AcquireLease(ctx, store.LeaseRequest{SessionID: "s1", Holder: "worker-1", TTL: time.Minute})
			return err
		},
		func() error {
			_, err := st.EnqueueIntervention(ctx, store.Intervention{ID: "iv-1", SessionID: "s1", RunID: "r1",
				Reason: "unknown dialog", Capability: v.Ref(), Step: "confirm", FailureCode: "E_UNEXPECTED_STATE",
				Effects: []byte(`{"posts":1}`), Summary: "a survey", Inputs: []byte(`{"amount":"250.00"}`),
				Screen: "Survey", RelayAddr: "http://127.0.0.1:9"})
			return err
		},
		func() error { _, err := st.ClaimIntervention(ctx, "iv-1", "alice"); return err },
		func() error {
			_, err := st.EnqueueIntervention(ctx, store.Intervention{ID: "iv-2", SessionID: "s2", Reason: "fate unknown"})
			return err
		},
		func() error {
			_, _, err := st.ClaimJobKey(ctx, store.JobKey{CapabilityID: v.CapabilityID, Key: "job-key", InputsDigest: "dg2"})
			return err
		},
		func() error { return st.SetJobKeyJob(ctx, v.CapabilityID, "job-key", 0, 41) },
		func() error {
			_, err := st.SettleIntervention(ctx, store.Settlement{ID: "iv-2", Verdict: store.VerdictNotLanded, By: "alice",
				Note: "no ledger entry", Release: &store.JobKey{CapabilityID: v.CapabilityID, Key: "job-key"}, ReleaseJobID: 41})
			return err
		},
		func() error {
			_, err := st.AddPrincipal(ctx, store.PrincipalRecord{Name: "alice", Role: "admin", SecretHash: "$argon2id$x", CreatedBy: "bootstrap"})
			return err
		},
		func() error {
			_, err := st.AddPrincipal(ctx, store.PrincipalRecord{Name: "bob", Role: "operator", SecretHash: "$argon2id$y", CreatedBy: "alice"})
			return err
		},
		func() error { _, err := st.NoteSignIn(ctx, "bob", false, 1, 15*time.Minute); return err },
		func() error { _, err := st.DisablePrincipal(ctx, "alice"); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("fixture step %d: %w", i, err)
		}
	}
	return nil
}

// dump is everything a store holds, read through the port.
type dump struct {
	Versions      []store.Version
	Approvals     []store.Approval
	Runs          []store.Run
	Leases        []store.Lease
	Interventions []store.Intervention
	JobKey        store.JobKey
	Principals    []store.PrincipalRecord
	KeyOwner      string
	EvalSuccesses int
}

// read dumps st; the fixture's lease sessions are s1 and s2.
func read(ctx context.Context, st store.Store) (dump, error) {
	var d dump
	var err error
	if d.Versions, err = st.ListVersions(ctx, store.VersionFilter{}); err != nil {
		return d, err
	}
	for i, v := range d.Versions {
		if d.Versions[i], err = st.GetVersion(ctx, v.CapabilityID, v.Version); err != nil {
			return d, err
		}
	}
	if d.Approvals, err = st.ListApprovals(ctx, store.ApprovalFilter{}); err != nil {
		return d, err
	}
	if d.Runs, err = st.ListRuns(ctx, store.RunFilter{}); err != nil {
		return d, err
	}
	for _, s := range []string{"s1", "s2"} {
		if l, err := st.GetLease(ctx, s); err == nil {
			d.Leases = append(d.Leases, l)
		}
	}
	if d.Interventions, err = st.ListInterventions(ctx, store.InterventionFilter{}); err != nil {
		return d, err
	}
	if d.JobKey, err = st.GetJobKey(ctx, "memberdesk.transfer", "job-key"); err != nil {
		return d, err
	}
	if d.Principals, err = st.ListPrincipals(ctx); err != nil {
		return d, err
	}
	if d.KeyOwner, err = st.LookupIdempotencyKey(ctx, "memberdesk.transfer", "key-1"); err != nil {
		return d, err
	}
	d.EvalSuccesses, err = st.CountEvalSuccesses(ctx, "sha256:aa11")
	return d, err
}

// openCopy copies the checked-in file to a temporary directory and opens it.
func openCopy(t *testing.T, now func() time.Time) (*sqlite.DB, string) {
	t.Helper()
	body, err := fsx.ReadFile(schema6File, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cua.db")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(t.Context(), path, store.Config{Now: now})
	if err != nil {
		t.Fatalf("open a schema-6 file of the old code: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// TestOpensSchema6File opens a copy of a file the old code wrote at schema
// 6: it migrates to today's schema, reads back exactly what the same writes
// give on a new file (its tables and columns are the same, to the letter of
// their CREATE statements), and takes every kind of write after.
func TestOpensSchema6File(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	later := fixtureStart.Add(48 * time.Hour)
	old, oldPath := openCopy(t, func() time.Time { return later })
	freshPath := filepath.Join(t.TempDir(), "cua.db")
	fresh, err := sqlite.Open(ctx, freshPath, store.Config{Now: fixtureClock})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := writeFixture(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	ov, err1 := old.SchemaVersion(ctx)
	fv, err2 := fresh.SchemaVersion(ctx)
	if err1 != nil || err2 != nil || ov != fv || ov < 6 {
		t.Fatalf("schema versions: old file %d (%v), new file %d (%v); want the same, at least 6", ov, err1, fv, err2)
	}
	got, err := read(ctx, old)
	if err != nil {
		t.Fatalf("read the old file: %v", err)
	}
	want, err := read(ctx, fresh)
	if err != nil {
		t.Fatalf("read the new file: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the old file reads\n%+v\nthe same writes on a new file read\n%+v", got, want)
	}
	if len(got.Versions) != 2 || len(got.Approvals) != 3 || len(got.Runs) != 2 || len(got.Interventions) != 2 ||
		len(got.Principals) != 2 || got.KeyOwner != "r1" || got.EvalSuccesses != 1 || got.JobKey.ReleasedBy != "alice" {
		t.Errorf("the old file holds %+v; want the fixture's records", got)
	}
	if o, f := schemaOf(t, oldPath), schemaOf(t, freshPath); !reflect.DeepEqual(o, f) {
		t.Errorf("schema of the old file\n%v\ndiffers from a new file's\n%v", o, f)
	}
	writeAfter(t, old)
}

// writeAfter makes one write of each kind on the migrated old file.
func writeAfter(t *testing.T, st store.Store) {
	ctx := t.Context()
	if _, created, err := st.AddVersion(ctx, store.Version{CapabilityID: "memberdesk.transfer", Version: "1.4.0",
		ContentHash: "sha256:dd44", Status: store.StatusSealed, Body: []byte("x")}); err != nil || !created {
		t.Errorf("AddVersion: created %v, %v", created, err)
	}
	if _, err := st.ConsumeApproval(ctx, "ap-once", "r9"); err == nil {
		t.Error("ConsumeApproval of the fixture's consumed one-off succeeded")
	}
	if l, err := st.AcquireLease(ctx, store.LeaseRequest{SessionID: "s1", Holder: "worker-2", TTL: time.Minute}); err != nil || l.Epoch != 2 {
		t.Errorf("AcquireLease of the expired lease = %+v, %v; want epoch 2", l, err)
	}
	if _, err := st.RecordRun(ctx, store.Run{ID: "r3", CapabilityID: "memberdesk.transfer", ContentHash: "sha256:aa11",
		Status: "RUNNING", IdempotencyKey: "key-1"}); err == nil {
		t.Error("RecordRun with the fixture's claimed idempotency key succeeded")
	}
	if in, err := st.ReleaseIntervention(ctx, "iv-1", "alice"); err != nil || in.Status != store.InterventionOpen {
		t.Errorf("ReleaseIntervention = %+v, %v", in, err)
	}
	if k, err := st.RebindJobKey(ctx, store.JobKey{CapabilityID: "memberdesk.transfer", Key: "job-key", InputsDigest: "dg3"}); err != nil || k.Generation != 1 {
		t.Errorf("RebindJobKey = %+v, %v; want generation 1", k, err)
	}
	if p, err := st.NoteSignIn(ctx, "bob", true, 5, time.Minute); err != nil || p.FailedSignIns != 0 {
		t.Errorf("NoteSignIn = %+v, %v", p, err)
	}
}

// schemaOf returns the CREATE statements of the file's tables and indexes.
func schemaOf(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil || len(out) == 0 {
		t.Fatalf("schema of %s: %d entries, %v", path, len(out), err)
	}
	return out
}
