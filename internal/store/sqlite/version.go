package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

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
	err := d.write(ctx, "AddVersion", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO capabilities (id, created_at) VALUES (?, ?)
			ON CONFLICT (id) DO NOTHING`, v.CapabilityID, micro(v.CreatedAt)); err != nil {
			return fmt.Errorf("add capability %s: %w", v.CapabilityID, err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO capability_versions
			(capability_id, version, content_hash, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			v.CapabilityID, v.Version, v.ContentHash, string(v.Status), v.Body, micro(v.CreatedAt))
		if err != nil {
			return fmt.Errorf("add version %s: %w", v.Ref(), err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
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
	old, err := getVersion(ctx, q, `capability_id = ? AND version = ?`, v.CapabilityID, v.Version)
	if errors.Is(err, store.ErrNotFound) {
		old, err = getVersion(ctx, q, `content_hash = ?`, v.ContentHash)
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
	return getVersion(ctx, d.db, `capability_id = ? AND version = ?`, id, version)
}

// GetVersionByHash implements [store.Store].
func (d *DB) GetVersionByHash(ctx context.Context, hash string) (store.Version, error) {
	return getVersion(ctx, d.db, `content_hash = ?`, hash)
}

func getVersion(ctx context.Context, q querier, where string, args ...any) (store.Version, error) {
	var v store.Version
	var created sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT capability_id, version, content_hash, status, body, created_at
		FROM capability_versions WHERE `+where, args...).
		Scan(&v.CapabilityID, &v.Version, &v.ContentHash, &v.Status, &v.Body, &created)
	if err != nil {
		return store.Version{}, notFound(err, fmt.Sprintf("version %v", args))
	}
	v.CreatedAt = fromMicro(created)
	return v, nil
}

// ListVersions implements [store.Store].
func (d *DB) ListVersions(ctx context.Context, f store.VersionFilter) ([]store.Version, error) {
	var where []string
	var args []any
	if f.CapabilityID != "" {
		where, args = append(where, "capability_id = ?"), append(args, f.CapabilityID)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	q := `SELECT capability_id, version, content_hash, status, created_at FROM capability_versions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := d.db.QueryContext(ctx, q+" ORDER BY capability_id, created_at, version", args...)
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	defer rows.Close()
	var out []store.Version
	for rows.Next() {
		var v store.Version
		var created sql.NullInt64
		if err := rows.Scan(&v.CapabilityID, &v.Version, &v.ContentHash, &v.Status, &created); err != nil {
			return nil, fmt.Errorf("list versions: %w", err)
		}
		v.CreatedAt = fromMicro(created)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	return out, nil
}
