package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/jackc/pgx/v5"
	"time"

	"github.com/cuahq/cua/internal/store"
)

const approvalCols = `id, capability_id, version, content_hash, approver, note, created_at, expires_at,
	bounds, once, inputs, consumed_by, consumed_at, revoked_at, revoked_by`

// AddApproval implements [store.Store].
func (d *DB) AddApproval(ctx context.Context, a store.Approval) (store.Approval, error) {
	if err := a.Validate(); err != nil {
		return store.Approval{}, err
	}
	a.CreatedAt = or(a.CreatedAt, d.now)
	a.ExpiresAt = store.Micro(a.ExpiresAt)
	bounds, err := json.Marshal(a.Bounds)
	if err != nil {
		return store.Approval{}, fmt.Errorf("approval %s: bounds: %w", a.ID, err)
	}
	var inputs any
	if a.Inputs != nil {
		b, err := json.Marshal(a.Inputs)
		if err != nil {
			return store.Approval{}, fmt.Errorf("approval %s: inputs: %w", a.ID, err)
		}
		inputs = string(b)
	}
	err = d.write(ctx, "AddApproval", func(tx pgx.Tx) error {
		v, err := getVersion(ctx, tx, `capability_id = $1 AND version = $2`, a.CapabilityID, a.Version)
		if err != nil {
			return fmt.Errorf("approval %s: %w", a.ID, err)
		}
		if v.ContentHash != a.ContentHash {
			return fmt.Errorf("approval %s: %s has content hash %s, approval names %s: %w",
				a.ID, v.Ref(), v.ContentHash, a.ContentHash, store.ErrHashMismatch)
		}
		res, err := tx.Exec(ctx, `INSERT INTO approvals (`+approvalCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL, NULL, NULL, '') ON CONFLICT (id) DO NOTHING`,
			a.ID, a.CapabilityID, a.Version, a.ContentHash, a.Approver, a.Note, ts(a.CreatedAt),
			ts(a.ExpiresAt), string(bounds), a.Once, inputs)
		if err != nil {
			return fmt.Errorf("approval %s: %w", a.ID, err)
		}
		if n := res.RowsAffected(); n == 0 {
			return fmt.Errorf("approval %s: %w", a.ID, store.ErrExists)
		}
		return nil
	})
	if err != nil {
		return store.Approval{}, err
	}
	return a, nil
}

// GetApproval implements [store.Store].
func (d *DB) GetApproval(ctx context.Context, id string) (store.Approval, error) {
	return getApproval(ctx, d.pool, id)
}

func getApproval(ctx context.Context, q querier, id string) (store.Approval, error) {
	a, err := scanApproval(q.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id))
	if err != nil {
		return store.Approval{}, notFound(err, "approval "+id)
	}
	return a, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanApproval(s scanner) (store.Approval, error) {
	var a store.Approval
	var created, expires, consumedAt, revoked *time.Time
	var bounds string
	var inputs, consumedBy *string
	err := s.Scan(&a.ID, &a.CapabilityID, &a.Version, &a.ContentHash, &a.Approver, &a.Note, &created, &expires,
		&bounds, &a.Once, &inputs, &consumedBy, &consumedAt, &revoked, &a.RevokedBy)
	if err != nil {
		return store.Approval{}, err
	}
	if err := json.Unmarshal([]byte(bounds), &a.Bounds); err != nil {
		return store.Approval{}, fmt.Errorf("approval %s: bounds: %w", a.ID, err)
	}
	if inputs != nil {
		if err := json.Unmarshal([]byte(*inputs), &a.Inputs); err != nil {
			return store.Approval{}, fmt.Errorf("approval %s: inputs: %w", a.ID, err)
		}
	}
	if consumedBy != nil {
		a.ConsumedBy = *consumedBy
	}
	a.CreatedAt, a.ExpiresAt = fromTS(created), fromTS(expires)
	a.ConsumedAt, a.RevokedAt = fromTS(consumedAt), fromTS(revoked)
	return a, nil
}

// ListApprovals implements [store.Store].
func (d *DB) ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error) {
	var w where
	for _, c := range []struct{ col, val string }{
		{"capability_id", f.CapabilityID}, {"version", f.Version}, {"content_hash", f.ContentHash},
	} {
		if c.val != "" {
			w.add(c.col+" = $%d", c.val)
		}
	}
	if !f.ActiveAt.IsZero() {
		w.add("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $%d) AND (NOT once OR consumed_by IS NULL)",
			store.Micro(f.ActiveAt))
	}
	q := `SELECT ` + approvalCols + ` FROM approvals` + w.sql()
	rows, err := d.pool.Query(ctx, q+" ORDER BY created_at, id", w.args...)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("list approvals: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return out, nil
}

// RevokeApproval implements [store.Store].
func (d *DB) RevokeApproval(ctx context.Context, id, by string) (store.Approval, error) {
	if by == "" {
		return store.Approval{}, fmt.Errorf("revoke approval %s: revoked by is required: %w", id, store.ErrInvalid)
	}
	var a store.Approval
	err := d.write(ctx, "RevokeApproval", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE approvals SET revoked_at = $1, revoked_by = $2 WHERE id = $3 AND revoked_at IS NULL`,
			d.now(), by, id)
		if err != nil {
			return fmt.Errorf("revoke approval %s: %w", id, err)
		}
		a, err = getApproval(ctx, tx, id)
		return err
	})
	return a, err
}

// ConsumeApproval implements [store.Store].
func (d *DB) ConsumeApproval(ctx context.Context, id, runID string) (store.Approval, error) {
	if runID == "" {
		return store.Approval{}, fmt.Errorf("consume approval %s: run id is required: %w", id, store.ErrInvalid)
	}
	var a store.Approval
	err := d.write(ctx, "ConsumeApproval", func(tx pgx.Tx) error {
		now := d.now()
		res, err := tx.Exec(ctx, `UPDATE approvals SET consumed_by = $1, consumed_at = $2
			WHERE id = $3 AND once AND consumed_by IS NULL AND revoked_at IS NULL
			AND (expires_at IS NULL OR expires_at > $4)`, runID, now, id, now)
		if err != nil {
			return fmt.Errorf("consume approval %s: %w", id, err)
		}
		n := res.RowsAffected()
		a, err = getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		if err := a.CheckConsumable(now); err != nil {
			return fmt.Errorf("consume approval: %w", err)
		}
		return fmt.Errorf("consume approval %s: not consumed", id)
	})
	if err != nil {
		return store.Approval{}, err
	}
	return a, nil
}
