package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/store"
)

const runCols = `id, capability_id, version, content_hash, status, outcome, failure_code, effects, started_at,
	ended_at, evidence_path, idempotency_key, approval_id, unauthorized_dispatches, eval, outputs, inputs_digest,
	chain_head, signature`

// RecordRun implements [store.Store].
func (d *DB) RecordRun(ctx context.Context, r store.Run) (store.Run, error) {
	if err := r.Validate(); err != nil {
		return store.Run{}, err
	}
	r.StartedAt = or(r.StartedAt, d.now)
	r.EndedAt = store.Micro(r.EndedAt)
	var first store.Run
	var claimed *store.IdempotencyError
	err := d.write(ctx, "RecordRun", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (`+runCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.CapabilityID, r.Version, r.ContentHash, string(r.Status), r.Outcome, string(r.FailureCode),
			nullJSON(r.Effects), micro(r.StartedAt), micro(r.EndedAt), r.EvidencePath, r.IdempotencyKey,
			r.ApprovalID, r.UnauthorizedDispatches, r.Eval, nullJSON(r.Outputs), r.InputsDigest, r.ChainHead, r.Signature)
		if err != nil {
			return fmt.Errorf("record run %s: %w", r.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("record run %s: %w", r.ID, store.ErrExists)
		}
		if r.IdempotencyKey == "" {
			return nil
		}
		res, err = tx.ExecContext(ctx, `INSERT INTO idempotency_keys (capability_id, key, run_id, created_at)
			VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, r.CapabilityID, r.IdempotencyKey, r.ID, micro(r.StartedAt))
		if err != nil {
			return fmt.Errorf("record run %s: claim idempotency key: %w", r.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		owner, err := lookupKey(ctx, tx, r.CapabilityID, r.IdempotencyKey)
		if err != nil {
			return err
		}
		if first, err = getRun(ctx, tx, owner); err != nil {
			return err
		}
		claimed = &store.IdempotencyError{CapabilityID: r.CapabilityID, Key: r.IdempotencyKey, RunID: owner}
		return claimed
	})
	if claimed != nil {
		return first, claimed
	}
	if err != nil {
		return store.Run{}, err
	}
	return r, nil
}

// nullJSON stores an absent JSON document as NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// UpdateRun implements [store.Store].
func (d *DB) UpdateRun(ctx context.Context, r store.Run) (store.Run, error) {
	if r.ID == "" {
		return store.Run{}, fmt.Errorf("update run: id is required: %w", store.ErrInvalid)
	}
	var out store.Run
	err := d.write(ctx, "UpdateRun", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, outcome = ?, failure_code = ?, effects = ?,
			ended_at = ?, evidence_path = ?, unauthorized_dispatches = ?, outputs = ?, chain_head = ?, signature = ?
			WHERE id = ?`,
			string(r.Status), r.Outcome, string(r.FailureCode), nullJSON(r.Effects), micro(store.Micro(r.EndedAt)),
			r.EvidencePath, r.UnauthorizedDispatches, nullJSON(r.Outputs), r.ChainHead, r.Signature, r.ID)
		if err != nil {
			return fmt.Errorf("update run %s: %w", r.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("update run %s: %w", r.ID, store.ErrNotFound)
		}
		out, err = getRun(ctx, tx, r.ID)
		return err
	})
	return out, err
}

// GetRun implements [store.Store].
func (d *DB) GetRun(ctx context.Context, id string) (store.Run, error) {
	return getRun(ctx, d.db, id)
}

func getRun(ctx context.Context, q querier, id string) (store.Run, error) {
	r, err := scanRun(q.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	if err != nil {
		return store.Run{}, notFound(err, "run "+id)
	}
	return r, nil
}

func scanRun(s scanner) (store.Run, error) {
	var r store.Run
	var effects, outputs sql.NullString
	var started, ended sql.NullInt64
	err := s.Scan(&r.ID, &r.CapabilityID, &r.Version, &r.ContentHash, &r.Status, &r.Outcome, &r.FailureCode,
		&effects, &started, &ended, &r.EvidencePath, &r.IdempotencyKey, &r.ApprovalID,
		&r.UnauthorizedDispatches, &r.Eval, &outputs, &r.InputsDigest, &r.ChainHead, &r.Signature)
	if err != nil {
		return store.Run{}, err
	}
	if effects.Valid {
		r.Effects = []byte(effects.String)
	}
	if outputs.Valid {
		r.Outputs = []byte(outputs.String)
	}
	r.StartedAt, r.EndedAt = fromMicro(started), fromMicro(ended)
	return r, nil
}

// ListRuns implements [store.Store].
func (d *DB) ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"capability_id", f.CapabilityID}, {"version", f.Version}, {"content_hash", f.ContentHash},
		{"status", string(f.Status)},
	} {
		if c.val != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.val)
		}
	}
	if !f.Since.IsZero() {
		where, args = append(where, "started_at >= ?"), append(args, store.Micro(f.Since).UnixMicro())
	}
	q := `SELECT ` + runCols + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started_at DESC, id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// LookupIdempotencyKey implements [store.Store].
func (d *DB) LookupIdempotencyKey(ctx context.Context, capabilityID, key string) (string, error) {
	return lookupKey(ctx, d.db, capabilityID, key)
}

func lookupKey(ctx context.Context, q querier, capabilityID, key string) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT run_id FROM idempotency_keys WHERE capability_id = ? AND key = ?`,
		capabilityID, key).Scan(&id)
	if err != nil {
		return "", notFound(err, fmt.Sprintf("idempotency key %q of %s", key, capabilityID))
	}
	return id, nil
}

// CountEvalSuccesses implements [store.Store].
func (d *DB) CountEvalSuccesses(ctx context.Context, hash string) (int, error) {
	var n int
	err := d.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE content_hash = ? AND eval = 1
		AND status = 'SUCCESS' AND unauthorized_dispatches = 0`, hash).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count eval successes of %s: %w", hash, err)
	}
	return n, nil
}
