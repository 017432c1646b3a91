package storetest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/store"
)

func testMigrateReopen(t *testing.T, h Harness) {
	addr := h.Fresh(t)
	first := setupAt(t, h, addr)
	v := mustAdd(t, first, version("lookup", "1.0.0", "a"))
	// A second handle on the same database sees the schema already applied
	// and the row the first wrote.
	second := setupAt(t, h, addr)
	got, err := second.st.GetVersion(second.ctx, v.CapabilityID, v.Version)
	if err != nil {
		t.Fatalf("GetVersion after reopen: %v", err)
	}
	if got.ContentHash != v.ContentHash {
		t.Fatalf("hash after reopen = %s, want %s", got.ContentHash, v.ContentHash)
	}
}

func testVersionImmutable(t *testing.T, h Harness) {
	b := setup(t, h)
	v := version("transfer", "1.0.0", "a")
	got, created, err := b.st.AddVersion(b.ctx, v)
	if err != nil || !created {
		t.Fatalf("first AddVersion = created %v, %v; want created", created, err)
	}
	if !got.CreatedAt.Equal(epoch) {
		t.Errorf("CreatedAt = %s, want the injected clock's %s", got.CreatedAt, epoch)
	}
	b.clock.Advance(1e9)
	again, created, err := b.st.AddVersion(b.ctx, v)
	if err != nil || created {
		t.Fatalf("re-adding the same hash = created %v, %v; want an idempotent no-op", created, err)
	}
	if !again.CreatedAt.Equal(epoch) {
		t.Errorf("re-add returned CreatedAt %s, want the first add's %s", again.CreatedAt, epoch)
	}
	other := version("transfer", "1.0.0", "b")
	_, _, err = b.st.AddVersion(b.ctx, other)
	var conflict *store.VersionConflictError
	if !errors.As(err, &conflict) || !errors.Is(err, store.ErrImmutable) {
		t.Fatalf("different hash under transfer@1.0.0: err = %v, want *VersionConflictError", err)
	}
	if conflict.ExistingHash != v.ContentHash || conflict.Hash != other.ContentHash {
		t.Errorf("conflict = %+v, want existing %s and refused %s", conflict, v.ContentHash, other.ContentHash)
	}
	for _, h := range []string{v.ContentHash, other.ContentHash} {
		if !strings.Contains(err.Error(), h) {
			t.Errorf("error %q does not name hash %s", err, h)
		}
	}
	// The same content under another id@version is refused as well.
	dup := version("transfer", "1.0.1", "x")
	dup.ContentHash = v.ContentHash
	if _, _, err := b.st.AddVersion(b.ctx, dup); !errors.As(err, &conflict) || conflict.ExistingRef != v.Ref() {
		t.Fatalf("known hash under transfer@1.0.1: err = %v, want a conflict naming %s", err, v.Ref())
	}
	stored, err := b.st.GetVersion(b.ctx, "transfer", "1.0.0")
	if err != nil || stored.ContentHash != v.ContentHash || !bytes.Equal(stored.Body, v.Body) {
		t.Fatalf("GetVersion = %+v, %v; want the first body and hash", stored, err)
	}
	byHash, err := b.st.GetVersionByHash(b.ctx, v.ContentHash)
	if err != nil || byHash.Ref() != v.Ref() || !bytes.Equal(byHash.Body, v.Body) {
		t.Fatalf("GetVersionByHash = %+v, %v; want %s", byHash, err, v.Ref())
	}
	if _, err := b.st.GetVersion(b.ctx, "transfer", "9.9.9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetVersion of a missing version: err = %v, want ErrNotFound", err)
	}
	if _, err := b.st.GetVersionByHash(b.ctx, "sha256:none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetVersionByHash of a missing hash: err = %v, want ErrNotFound", err)
	}
}

func testVersionInvalid(t *testing.T, h Harness) {
	b := setup(t, h)
	tests := []struct {
		name  string
		edit  func(v *store.Version)
		field string
	}{
		{"no id", func(v *store.Version) { v.CapabilityID = "" }, "capability id"},
		{"no version", func(v *store.Version) { v.Version = "" }, "version"},
		{"no hash", func(v *store.Version) { v.ContentHash = "" }, "content hash"},
		{"no body", func(v *store.Version) { v.Body = nil }, "body"},
		{"bad status", func(v *store.Version) { v.Status = "approved" }, "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := version("bad", "1.0.0", tt.name)
			tt.edit(&v)
			_, _, err := b.st.AddVersion(b.ctx, v)
			if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("err = %v, want ErrInvalid naming %q", err, tt.field)
			}
		})
	}
	if got, err := b.st.ListVersions(b.ctx, store.VersionFilter{}); err != nil || len(got) != 0 {
		t.Fatalf("ListVersions after refused adds = %d rows, %v; want none", len(got), err)
	}
}

func testListVersions(t *testing.T, h Harness) {
	b := setup(t, h)
	mustAdd(t, b, version("lookup", "1.0.0", "a"))
	b.clock.Advance(1e9)
	draft := version("lookup", "1.1.0", "a")
	draft.Status = store.StatusDraft
	mustAdd(t, b, draft)
	mustAdd(t, b, version("transfer", "1.0.0", "a"))
	tests := []struct {
		name string
		f    store.VersionFilter
		want []string
	}{
		{"all", store.VersionFilter{}, []string{"lookup@1.0.0", "lookup@1.1.0", "transfer@1.0.0"}},
		{"capability", store.VersionFilter{CapabilityID: "lookup"}, []string{"lookup@1.0.0", "lookup@1.1.0"}},
		{"drafts", store.VersionFilter{Status: store.StatusDraft}, []string{"lookup@1.1.0"}},
		{"none", store.VersionFilter{CapabilityID: "absent"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := b.st.ListVersions(b.ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var refs []string
			for _, v := range got {
				refs = append(refs, v.Ref())
				if v.Body != nil {
					t.Errorf("%s: list returned a body", v.Ref())
				}
			}
			if strings.Join(refs, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("refs = %v, want %v", refs, tt.want)
			}
		})
	}
}
