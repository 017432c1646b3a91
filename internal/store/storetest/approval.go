package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/store"
)

func testAddApproval(t *testing.T, h Harness) {
	b := setup(t, h)
	v := mustAdd(t, b, version("transfer", "1.0.0", "a"))
	a := approval("ap-1", v)
	a.ExpiresAt = epoch.Add(30 * 24 * time.Hour)
	a.Bounds = store.Bounds{
		Max:          map[string]string{"amount": "500.00"},
		Allowed:      map[string][]string{"account": {"ACC-1", "ACC-2"}},
		Pattern:      map[string]string{"memo": "^[A-Z ]+$"},
		InputsSchema: json.RawMessage(`{"type":"object"}`),
	}
	mustApprove(t, b, a)
	got, err := b.st.GetApproval(b.ctx, "ap-1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Bounds, a.Bounds) || got.Approver != "alice" || got.Note != "reviewed" ||
		!got.ExpiresAt.Equal(a.ExpiresAt) || !got.CreatedAt.Equal(epoch) {
		t.Fatalf("GetApproval = %+v, want %+v stamped at %s", got, a, epoch)
	}
	tests := []struct {
		name string
		a    store.Approval
		want error
	}{
		{"duplicate id", approval("ap-1", v), store.ErrExists},
		{"other content", func() store.Approval {
			x := approval("ap-2", v)
			x.ContentHash = "sha256:other"
			return x
		}(), store.ErrHashMismatch},
		{"missing version", approval("ap-3", version("transfer", "2.0.0", "a")), store.ErrNotFound},
		{"no approver", func() store.Approval { x := approval("ap-4", v); x.Approver = ""; return x }(), store.ErrInvalid},
		{"one-off without inputs", func() store.Approval {
			x := approval("ap-5", v)
			x.Once = true
			return x
		}(), store.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := b.st.AddApproval(b.ctx, tt.a); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	all, err := b.st.ListApprovals(b.ctx, store.ApprovalFilter{})
	if err != nil || len(all) != 1 {
		t.Fatalf("ListApprovals = %d, %v; want only ap-1", len(all), err)
	}
}

func testApprovalActive(t *testing.T, h Harness) {
	b := setup(t, h)
	v := mustAdd(t, b, version("transfer", "1.0.0", "a"))
	w := mustAdd(t, b, version("transfer", "1.1.0", "a"))
	expiring := approval("expiring", v)
	expiring.ExpiresAt = epoch.Add(time.Hour)
	// Created a second apart and added out of id order, so oldest first is
	// visible in the listing.
	for _, a := range []store.Approval{approval("standing", v), expiring, approval("revoked", v),
		oneOff("used", v), approval("other-version", w)} {
		a.CreatedAt = b.clock.Now()
		mustApprove(t, b, a)
		b.clock.Advance(time.Second)
	}
	if _, err := b.st.ConsumeApproval(b.ctx, "used", "run-1"); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Minute)
	revokedAt := b.clock.Now()
	if _, err := b.st.RevokeApproval(b.ctx, "revoked", ""); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "revoked by") {
		t.Fatalf("revoking with no revoker: err = %v, want ErrInvalid naming revoked by", err)
	}
	r, err := b.st.RevokeApproval(b.ctx, "revoked", "carol")
	if err != nil || !r.RevokedAt.Equal(revokedAt) || r.RevokedBy != "carol" {
		t.Fatalf("RevokeApproval = %+v, %v; want revoked by carol at the clock's time", r, err)
	}
	b.clock.Advance(time.Minute)
	if r, err := b.st.RevokeApproval(b.ctx, "revoked", "dave"); err != nil || !r.RevokedAt.Equal(revokedAt) || r.RevokedBy != "carol" {
		t.Fatalf("revoking twice = %+v, %v; want the first revocation time and revoker (carol) kept", r, err)
	}
	if got, err := b.st.GetApproval(b.ctx, "revoked"); err != nil || got.RevokedBy != "carol" {
		t.Fatalf("GetApproval after revoke = %+v, %v; want revoked by carol", got, err)
	}
	if _, err := b.st.RevokeApproval(b.ctx, "absent", "carol"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking an absent approval: err = %v, want ErrNotFound", err)
	}
	tests := []struct {
		name string
		f    store.ApprovalFilter
		want string
	}{
		{"all of v", store.ApprovalFilter{ContentHash: v.ContentHash}, "standing,expiring,revoked,used"},
		{"by version", store.ApprovalFilter{CapabilityID: "transfer", Version: "1.1.0"}, "other-version"},
		{"active now", store.ApprovalFilter{ContentHash: v.ContentHash, ActiveAt: epoch.Add(2 * time.Minute)}, "standing,expiring"},
		{"active later", store.ApprovalFilter{ContentHash: v.ContentHash, ActiveAt: epoch.Add(2 * time.Hour)}, "standing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := b.st.ListApprovals(b.ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, a := range got {
				ids = append(ids, a.ID)
			}
			if strings.Join(ids, ",") != tt.want {
				t.Fatalf("ids = %v, want %s", ids, tt.want)
			}
		})
	}
}

func testConsumeApproval(t *testing.T, h Harness) {
	b := setup(t, h)
	v := mustAdd(t, b, version("transfer", "1.0.0", "a"))
	mustApprove(t, b, approval("standing", v))
	mustApprove(t, b, oneOff("once", v))
	expired := oneOff("expired", v)
	expired.ExpiresAt = epoch.Add(time.Minute)
	mustApprove(t, b, expired)
	mustApprove(t, b, oneOff("revoked", v))
	if _, err := b.st.RevokeApproval(b.ctx, "revoked", "carol"); err != nil {
		t.Fatal(err)
	}
	got, err := b.st.ConsumeApproval(b.ctx, "once", "run-1")
	if err != nil || got.ConsumedBy != "run-1" || !got.ConsumedAt.Equal(epoch) {
		t.Fatalf("ConsumeApproval = %+v, %v; want consumed by run-1 at %s", got, err, epoch)
	}
	if !reflect.DeepEqual(got.Inputs, oneOff("x", v).Inputs) {
		t.Errorf("inputs = %v, want the exact inputs approved", got.Inputs)
	}
	b.clock.Advance(2 * time.Minute)
	tests := []struct {
		id, run string
		want    error
		names   string
	}{
		{"once", "run-2", store.ErrApprovalConsumed, "run-1"},
		{"standing", "run-3", store.ErrNotOneOff, "standing"},
		{"expired", "run-4", store.ErrApprovalExpired, "expired"},
		{"revoked", "run-5", store.ErrApprovalRevoked, "revoked"},
		{"absent", "run-6", store.ErrNotFound, "absent"},
		{"once", "", store.ErrInvalid, "run id"},
	}
	for _, tt := range tests {
		t.Run(tt.id+"/"+tt.run, func(t *testing.T) {
			_, err := b.st.ConsumeApproval(b.ctx, tt.id, tt.run)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.names) {
				t.Fatalf("err = %v, want %v naming %q", err, tt.want, tt.names)
			}
		})
	}
	if a, _ := b.st.GetApproval(b.ctx, "once"); a.ConsumedBy != "run-1" {
		t.Fatalf("after refused consumers ConsumedBy = %q, want run-1", a.ConsumedBy)
	}
}

func testConsumeConcurrent(t *testing.T, h Harness) {
	b := setup(t, h)
	v := mustAdd(t, b, version("transfer", "1.0.0", "a"))
	mustApprove(t, b, oneOff("once", v))
	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = b.st.ConsumeApproval(b.ctx, "once", runName(i))
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("consumers %d and %d both consumed the one-off approval", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrApprovalConsumed):
			t.Fatalf("consumer %d: err = %v, want ErrApprovalConsumed", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no consumer won")
	}
	if a, _ := b.st.GetApproval(b.ctx, "once"); a.ConsumedBy != runName(winner) {
		t.Fatalf("ConsumedBy = %q, want the winner %s", a.ConsumedBy, runName(winner))
	}
}

func runName(i int) string { return "run-" + string(rune('a'+i)) }
