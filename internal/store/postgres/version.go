package postgres

import (
	"context"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// AddVersion implements [store.Store].
func (d *DB) AddVersion(ctx context.Context, v store.Version) (store.Version, bool, error) {
	if err := v.Validate(); err != nil {
		return store.Version{}, false, err
	}
	v.CreatedAt = or(v.CreatedAt, d.now)
	var stored store.Version
	created := false
	err := d.write(ctx, "AddVersion", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO capabilities (id, created_at) VALUES ($1, $2)
			ON CONFLICT (id) DO NOTHING`, v.CapabilityID, ts(v.CreatedAt)); err != nil {
			return fmt.Errorf("add capability %s: %w", v.CapabilityID, err)
		}
		res, err := tx.Exec(ctx, `INSERT INTO capability_versions
			(capability_id, version, content_hash, status, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT DO NOTHING`,
			v.CapabilityID, v.Version, v.ContentHash, string(v.Status), v.Body, ts(v.CreatedAt))
		if err != nil {
			return fmt.Errorf("add version %s: %w", v.Ref(), err)
		}
		if n := res.RowsAffected(); n == 1 {
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
func conflict(ctx context.Context, q querier, v store.Version) (store.Version, error) {
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
func (d *DB) GetVersion(ctx context.Context, id, version string) (store.Version, error) {
	return getVersion(ctx, d.pool, `capability_id = $1 AND version = $2`, id, version)
}

// GetVersionByHash implements [store.Store].
func (d *DB) GetVersionByHash(ctx context.Context, hash string) (store.Version, error) {
	return getVersion(ctx, d.pool, `content_hash = $1`, hash)
}

func getVersion(ctx context.Context, q querier, where string, args ...any) (store.Version, error) {
	var v store.Version
	var created *time.Time
	err := q.QueryRow(ctx, `SELECT capability_id, version, content_hash, status, body, created_at
		FROM capability_versions WHERE `+where, args...).
		Scan(&v.CapabilityID, &v.Version, &v.ContentHash, &v.Status, &v.Body, &created)
	if err != nil {
		return store.Version{}, notFound(err, fmt.Sprintf("version %v", args))
	}
	v.CreatedAt = fromTS(created)
	return v, nil
}

// ListVersions implements [store.Store].
func (d *DB) ListVersions(ctx context.Context, f store.VersionFilter) ([]store.Version, error) {
	var w where
	if f.CapabilityID != "" {
		w.add("capability_id = $%d", f.CapabilityID)
	}
	if f.Status != "" {
		w.add("status = $%d", string(f.Status))
	}
	q := `SELECT capability_id, version, content_hash, status, created_at FROM capability_versions` + w.sql()
	rows, err := d.pool.Query(ctx, q+" ORDER BY capability_id, created_at, version", w.args...)
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	defer rows.Close()
	var out []store.Version
	for rows.Next() {
		var v store.Version
		var created *time.Time
		if err := rows.Scan(&v.CapabilityID, &v.Version, &v.ContentHash, &v.Status, &created); err != nil {
			return nil, fmt.Errorf("list versions: %w", err)
		}
		v.CreatedAt = fromTS(created)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	return out, nil
}
