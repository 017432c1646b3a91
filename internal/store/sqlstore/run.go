package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cuahq/cua/internal/store"
)

const runCols = `id, capability_id, version, content_hash, status, outcome, failure_code, effects, started_at,
	ended_at, evidence_path, idempotency_key, approval_id, unauthorized_dispatches, eval, outputs, inputs_digest,
	chain_head, signature`

// RecordRun implements [store.Store].
func (s *DB) RecordRun(ctx context.Context, r store.Run) (store.Run, error) {
	if err := r.Validate(); err != nil {
		return store.Run{}, err
	}
	r.StartedAt = or(r.StartedAt, s.now)
	r.EndedAt = store.Micro(r.EndedAt)
	var first store.Run
	var claimed *store.IdempotencyError
	err := s.write(ctx, "RecordRun", func(tx conn) error {
		err := tx.insert(ctx, "record run "+r.ID, `INSERT INTO runs (`+runCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.CapabilityID, r.Version, r.ContentHash, string(r.Status), r.Outcome, string(r.FailureCode),
			nullJSON(r.Effects), s.ts(r.StartedAt), s.ts(r.EndedAt), r.EvidencePath, r.IdempotencyKey,
			r.ApprovalID, r.UnauthorizedDispatches, r.Eval, nullJSON(r.Outputs), r.InputsDigest, r.ChainHead, r.Signature)
		if err != nil || r.IdempotencyKey == "" {
			return err
		}
		n, err := tx.execN(ctx, `INSERT INTO idempotency_keys (capability_id, key, run_id, created_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, r.CapabilityID, r.IdempotencyKey, r.ID, s.ts(r.StartedAt))
		if err != nil {
			return fmt.Errorf("record run %s: claim idempotency key: %w", r.ID, err)
		}
		if n == 1 {
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

// UpdateRun implements [store.Store].
func (s *DB) UpdateRun(ctx context.Context, r store.Run) (store.Run, error) {
	if r.ID == "" {
		return store.Run{}, fmt.Errorf("update run: id is required: %w", store.ErrInvalid)
	}
	var out store.Run
	err := s.write(ctx, "UpdateRun", func(tx conn) error {
		n, err := tx.execN(ctx, `UPDATE runs SET status = $1, outcome = $2, failure_code = $3, effects = $4,
			ended_at = $5, evidence_path = $6, unauthorized_dispatches = $7, outputs = $8, chain_head = $9,
			signature = $10 WHERE id = $11`,
			string(r.Status), r.Outcome, string(r.FailureCode), nullJSON(r.Effects), s.ts(r.EndedAt),
			r.EvidencePath, r.UnauthorizedDispatches, nullJSON(r.Outputs), r.ChainHead, r.Signature, r.ID)
		if err != nil {
			return fmt.Errorf("update run %s: %w", r.ID, err)
		}
		if n == 0 {
			return fmt.Errorf("update run %s: %w", r.ID, store.ErrNotFound)
		}
		out, err = getRun(ctx, tx, r.ID)
		return err
	})
	return out, err
}

// GetRun implements [store.Store].
func (s *DB) GetRun(ctx context.Context, id string) (store.Run, error) {
	return getRun(ctx, s.q(), id)
}

func getRun(ctx context.Context, q conn, id string) (store.Run, error) {
	r, err := scanRun(q.row(ctx, `SELECT `+runCols+` FROM runs WHERE id = $1`, id))
	if err != nil {
		return store.Run{}, notFound(err, "run "+id)
	}
	return r, nil
}

func scanRun(row scanner) (store.Run, error) {
	var r store.Run
	var effects, outputs sql.NullString
	var started, ended nullTime
	err := row.Scan(&r.ID, &r.CapabilityID, &r.Version, &r.ContentHash, &r.Status, &r.Outcome, &r.FailureCode,
		&effects, &started, &ended, &r.EvidencePath, &r.IdempotencyKey, &r.ApprovalID,
		&r.UnauthorizedDispatches, &r.Eval, &outputs, &r.InputsDigest, &r.ChainHead, &r.Signature)
	if err != nil {
		return store.Run{}, err
	}
	r.Effects, r.Outputs = bytesOf(effects), bytesOf(outputs)
	r.StartedAt, r.EndedAt = started.t, ended.t
	return r, nil
}

// ListRuns implements [store.Store].
func (s *DB) ListRuns(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	var w where
	w.eq("capability_id", f.CapabilityID)
	w.eq("version", f.Version)
	w.eq("content_hash", f.ContentHash)
	w.eq("status", string(f.Status))
	if !f.Since.IsZero() {
		w.add("started_at >= $%d", s.ts(f.Since))
	}
	q := `SELECT ` + runCols + ` FROM runs` + w.sql() + " ORDER BY started_at DESC, id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return list(ctx, s.q(), "runs", scanRun, q, w.args...)
}

// LookupIdempotencyKey implements [store.Store].
func (s *DB) LookupIdempotencyKey(ctx context.Context, capabilityID, key string) (string, error) {
	return lookupKey(ctx, s.q(), capabilityID, key)
}

func lookupKey(ctx context.Context, q conn, capabilityID, key string) (string, error) {
	var id string
	err := q.row(ctx, `SELECT run_id FROM idempotency_keys WHERE capability_id = $1 AND key = $2`,
		capabilityID, key).Scan(&id)
	if err != nil {
		return "", notFound(err, fmt.Sprintf("idempotency key %q of %s", key, capabilityID))
	}
	return id, nil
}

// CountEvalSuccesses implements [store.Store].
func (s *DB) CountEvalSuccesses(ctx context.Context, hash string) (int, error) {
	var n int
	err := s.q().row(ctx, `SELECT COUNT(*) FROM runs WHERE content_hash = $1 AND eval = TRUE
		AND status = 'SUCCESS' AND unauthorized_dispatches = 0`, hash).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count eval successes of %s: %w", hash, err)
	}
	return n, nil
}
