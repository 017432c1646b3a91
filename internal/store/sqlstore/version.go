package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuahq/cua/internal/store"
)

// AddVersion implements [store.Store].
func (s *DB) AddVersion(ctx context.Context, v store.Version) (store.Version, bool, error) {
	if err := v.Validate(); err != nil {
		return store.Version{}, false, err
	}
	v.CreatedAt = or(v.CreatedAt, s.now)
	var stored store.Version
	created := false
	err := s.write(ctx, "AddVersion", func(tx conn) error {
		if _, err := tx.exec(ctx, `INSERT INTO capabilities (id, created_at) VALUES ($1, $2)
			ON CONFLICT (id) DO NOTHING`, v.CapabilityID, s.ts(v.CreatedAt)); err != nil {
			return fmt.Errorf("add capability %s: %w", v.CapabilityID, err)
		}
		n, err := tx.execN(ctx, `INSERT INTO capability_versions
			(capability_id, version, content_hash, status, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT DO NOTHING`,
			v.CapabilityID, v.Version, v.ContentHash, string(v.Status), v.Body, s.ts(v.CreatedAt))
		if err != nil {
			return fmt.Errorf("add version %s: %w", v.Ref(), err)
		}
		if n == 1 {
			stored, created = v, true
			return nil
		}
		stored, err = conflict(ctx, tx, v)
		return err
	})
	if err != nil {
		return store.Version{}, false, err
	}
	return stored, created, nil
}

// conflict explains why v was not inserted: the same id@version and hash
// (an idempotent re-add, returns the stored version) or a conflict.
func conflict(ctx context.Context, q conn, v store.Version) (store.Version, error) {
	old, err := getVersion(ctx, q, `capability_id = $1 AND version = $2`, v.CapabilityID, v.Version)
	if errors.Is(err, store.ErrNotFound) {
		old, err = getVersion(ctx, q, `content_hash = $1`, v.ContentHash)
	}
	if err != nil {
		return store.Version{}, fmt.Errorf("add version %s: %w", v.Ref(), err)
	}
	if old.Ref() == v.Ref() && old.ContentHash == v.ContentHash {
		return old, nil
	}
	return store.Version{}, &store.VersionConflictError{
		Ref: v.Ref(), Hash: v.ContentHash, ExistingRef: old.Ref(), ExistingHash: old.ContentHash,
	}
}

// GetVersion implements [store.Store].
func (s *DB) GetVersion(ctx context.Context, id, version string) (store.Version, error) {
	return getVersion(ctx, s.q(), `capability_id = $1 AND version = $2`, id, version)
}

// GetVersionByHash implements [store.Store].
func (s *DB) GetVersionByHash(ctx context.Context, hash string) (store.Version, error) {
	return getVersion(ctx, s.q(), `content_hash = $1`, hash)
}

func getVersion(ctx context.Context, q conn, where string, args ...any) (store.Version, error) {
	var v store.Version
	var created nullTime
	err := q.row(ctx, `SELECT capability_id, version, content_hash, status, body, created_at
		FROM capability_versions WHERE `+where, args...).
		Scan(&v.CapabilityID, &v.Version, &v.ContentHash, &v.Status, &v.Body, &created)
	if err != nil {
		return store.Version{}, notFound(err, fmt.Sprintf("version %v", args))
	}
	v.CreatedAt = created.t
	return v, nil
}

// ListVersions implements [store.Store].
func (s *DB) ListVersions(ctx context.Context, f store.VersionFilter) ([]store.Version, error) {
	var w where
	w.eq("capability_id", f.CapabilityID)
	w.eq("status", string(f.Status))
	return list(ctx, s.q(), "versions", func(r scanner) (store.Version, error) {
		var v store.Version
		var created nullTime
		err := r.Scan(&v.CapabilityID, &v.Version, &v.ContentHash, &v.Status, &created)
		v.CreatedAt = created.t
		return v, err
	}, `SELECT capability_id, version, content_hash, status, created_at FROM capability_versions`+w.sql()+
		` ORDER BY capability_id, created_at, version`, w.args...)
}
