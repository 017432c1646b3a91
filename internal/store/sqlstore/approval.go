package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/cuahq/cua/internal/store"
)

const approvalCols = `id, capability_id, version, content_hash, approver, note, created_at, expires_at,
	bounds, once, inputs, consumed_by, consumed_at, revoked_at, revoked_by`

// AddApproval implements [store.Store].
func (s *DB) AddApproval(ctx context.Context, a store.Approval) (store.Approval, error) {
	if err := a.Validate(); err != nil {
		return store.Approval{}, err
	}
	a.CreatedAt = or(a.CreatedAt, s.now)
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
	err = s.write(ctx, "AddApproval", func(tx conn) error {
		v, err := getVersion(ctx, tx, `capability_id = $1 AND version = $2`, a.CapabilityID, a.Version)
		if err != nil {
			return fmt.Errorf("approval %s: %w", a.ID, err)
		}
		if v.ContentHash != a.ContentHash {
			return fmt.Errorf("approval %s: %s has content hash %s, approval names %s: %w",
				a.ID, v.Ref(), v.ContentHash, a.ContentHash, store.ErrHashMismatch)
		}
		return tx.insert(ctx, "approval "+a.ID, `INSERT INTO approvals (`+approvalCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL, NULL, NULL, '') ON CONFLICT (id) DO NOTHING`,
			a.ID, a.CapabilityID, a.Version, a.ContentHash, a.Approver, a.Note, s.ts(a.CreatedAt),
			s.ts(a.ExpiresAt), string(bounds), a.Once, inputs)
	})
	if err != nil {
		return store.Approval{}, err
	}
	return a, nil
}

// GetApproval implements [store.Store].
func (s *DB) GetApproval(ctx context.Context, id string) (store.Approval, error) {
	return getApproval(ctx, s.q(), id)
}

func getApproval(ctx context.Context, q conn, id string) (store.Approval, error) {
	a, err := scanApproval(q.row(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id))
	if err != nil {
		return store.Approval{}, notFound(err, "approval "+id)
	}
	return a, nil
}

func scanApproval(r scanner) (store.Approval, error) {
	var a store.Approval
	var created, expires, consumedAt, revoked nullTime
	var bounds string
	var inputs, consumedBy sql.NullString
	err := r.Scan(&a.ID, &a.CapabilityID, &a.Version, &a.ContentHash, &a.Approver, &a.Note, &created, &expires,
		&bounds, &a.Once, &inputs, &consumedBy, &consumedAt, &revoked, &a.RevokedBy)
	if err != nil {
		return store.Approval{}, err
	}
	if err := json.Unmarshal([]byte(bounds), &a.Bounds); err != nil {
		return store.Approval{}, fmt.Errorf("approval %s: bounds: %w", a.ID, err)
	}
	if inputs.Valid {
		if err := json.Unmarshal([]byte(inputs.String), &a.Inputs); err != nil {
			return store.Approval{}, fmt.Errorf("approval %s: inputs: %w", a.ID, err)
		}
	}
	a.ConsumedBy = consumedBy.String
	a.CreatedAt, a.ExpiresAt, a.ConsumedAt, a.RevokedAt = created.t, expires.t, consumedAt.t, revoked.t
	return a, nil
}

// ListApprovals implements [store.Store].
func (s *DB) ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error) {
	var w where
	w.eq("capability_id", f.CapabilityID)
	w.eq("version", f.Version)
	w.eq("content_hash", f.ContentHash)
	if !f.ActiveAt.IsZero() {
		w.add("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $%d) AND (once = FALSE OR consumed_by IS NULL)",
			s.ts(f.ActiveAt))
	}
	return list(ctx, s.q(), "approvals", scanApproval,
		`SELECT `+approvalCols+` FROM approvals`+w.sql()+` ORDER BY created_at, id`, w.args...)
}

// RevokeApproval implements [store.Store].
func (s *DB) RevokeApproval(ctx context.Context, id, by string) (store.Approval, error) {
	if by == "" {
		return store.Approval{}, fmt.Errorf("revoke approval %s: revoked by is required: %w", id, store.ErrInvalid)
	}
	var a store.Approval
	err := s.write(ctx, "RevokeApproval", func(tx conn) error {
		_, err := tx.exec(ctx, `UPDATE approvals SET revoked_at = $1, revoked_by = $2 WHERE id = $3 AND revoked_at IS NULL`,
			s.ts(s.now()), by, id)
		if err != nil {
			return fmt.Errorf("revoke approval %s: %w", id, err)
		}
		a, err = getApproval(ctx, tx, id)
		return err
	})
	return a, err
}

// ConsumeApproval implements [store.Store].
func (s *DB) ConsumeApproval(ctx context.Context, id, runID string) (store.Approval, error) {
	if runID == "" {
		return store.Approval{}, fmt.Errorf("consume approval %s: run id is required: %w", id, store.ErrInvalid)
	}
	var a store.Approval
	err := s.write(ctx, "ConsumeApproval", func(tx conn) error {
		now := s.now()
		n, err := tx.execN(ctx, `UPDATE approvals SET consumed_by = $1, consumed_at = $2
			WHERE id = $3 AND once = TRUE AND consumed_by IS NULL AND revoked_at IS NULL
			AND (expires_at IS NULL OR expires_at > $2)`, runID, s.ts(now), id)
		if err != nil {
			return fmt.Errorf("consume approval %s: %w", id, err)
		}
		if a, err = getApproval(ctx, tx, id); err != nil {
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
