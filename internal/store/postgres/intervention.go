package postgres

import (
	"context"
	"fmt"
	"github.com/jackc/pgx/v5"
	"time"

	"github.com/cuahq/cua/internal/store"
)

const interventionCols = `id, session_id, run_id, reason, status, created_at, claimed_by, claimed_at,
	resolved_at, resolution, capability, step, failure_code, effects, summary, verdict, resolved_by, note, inputs, screen, relay_addr`

// EnqueueIntervention implements [store.Store].
func (d *DB) EnqueueIntervention(ctx context.Context, in store.Intervention) (store.Intervention, error) {
	if err := in.Validate(); err != nil {
		return store.Intervention{}, err
	}
	in.CreatedAt = or(in.CreatedAt, d.now)
	in.Status, in.ClaimedBy, in.ClaimedAt, in.ResolvedAt, in.Resolution = store.InterventionOpen, "", time.Time{}, time.Time{}, ""
	err := d.write(ctx, "EnqueueIntervention", func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, `INSERT INTO interventions (id, session_id, run_id, reason, status, created_at,
			capability, step, failure_code, effects, summary, inputs, screen, relay_addr)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING`,
			in.ID, in.SessionID, in.RunID, in.Reason, string(in.Status), ts(in.CreatedAt),
			in.Capability, in.Step, string(in.FailureCode), nullJSON(in.Effects), in.Summary,
			nullJSON(in.Inputs), in.Screen, in.RelayAddr)
		if err != nil {
			return fmt.Errorf("enqueue intervention %s: %w", in.ID, err)
		}
		if n := res.RowsAffected(); n == 0 {
			return fmt.Errorf("enqueue intervention %s: %w", in.ID, store.ErrExists)
		}
		return nil
	})
	if err != nil {
		return store.Intervention{}, err
	}
	return in, nil
}

// ClaimIntervention implements [store.Store].
func (d *DB) ClaimIntervention(ctx context.Context, id, claimer string) (store.Intervention, error) {
	if claimer == "" {
		return store.Intervention{}, fmt.Errorf("claim intervention %s: claimer is required: %w", id, store.ErrInvalid)
	}
	var out store.Intervention
	err := d.write(ctx, "ClaimIntervention", func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE interventions SET status = 'claimed', claimed_by = $1, claimed_at = $2
			WHERE id = $3 AND status = 'open'`, claimer, ts(d.now()), id)
		if err != nil {
			return fmt.Errorf("claim intervention %s: %w", id, err)
		}
		n := res.RowsAffected()
		if out, err = getIntervention(ctx, tx, id); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("claim intervention %s: %s by %q: %w", id, out.Status, out.ClaimedBy, store.ErrAlreadyClaimed)
		}
		return nil
	})
	if err != nil {
		return store.Intervention{}, err
	}
	return out, nil
}

// ResolveIntervention implements [store.Store].
func (d *DB) ResolveIntervention(ctx context.Context, id, resolution string) (store.Intervention, error) {
	var out store.Intervention
	err := d.write(ctx, "ResolveIntervention", func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE interventions SET status = 'resolved', resolved_at = $1, resolution = $2
			WHERE id = $3 AND status <> 'resolved'`, ts(d.now()), resolution, id)
		if err != nil {
			return fmt.Errorf("resolve intervention %s: %w", id, err)
		}
		n := res.RowsAffected()
		if out, err = getIntervention(ctx, tx, id); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("resolve intervention %s: %w", id, store.ErrAlreadyResolved)
		}
		return nil
	})
	if err != nil {
		return store.Intervention{}, err
	}
	return out, nil
}

func getIntervention(ctx context.Context, q querier, id string) (store.Intervention, error) {
	in, err := scanIntervention(q.QueryRow(ctx, `SELECT `+interventionCols+` FROM interventions WHERE id = $1`, id))
	if err != nil {
		return store.Intervention{}, notFound(err, "intervention "+id)
	}
	return in, nil
}

func scanIntervention(s scanner) (store.Intervention, error) {
	var in store.Intervention
	var created, claimed, resolved *time.Time
	var effects, inputs *string
	err := s.Scan(&in.ID, &in.SessionID, &in.RunID, &in.Reason, &in.Status, &created, &in.ClaimedBy, &claimed,
		&resolved, &in.Resolution, &in.Capability, &in.Step, &in.FailureCode, &effects, &in.Summary, &in.Verdict, &in.ResolvedBy, &in.Note,
		&inputs, &in.Screen, &in.RelayAddr)
	if err != nil {
		return store.Intervention{}, err
	}
	if effects != nil {
		in.Effects = []byte(*effects)
	}
	if inputs != nil {
		in.Inputs = []byte(*inputs)
	}
	in.CreatedAt, in.ClaimedAt, in.ResolvedAt = fromTS(created), fromTS(claimed), fromTS(resolved)
	return in, nil
}

// ListInterventions implements [store.Store].
func (d *DB) ListInterventions(ctx context.Context, f store.InterventionFilter) ([]store.Intervention, error) {
	var w where
	if f.SessionID != "" {
		w.add("session_id = $%d", f.SessionID)
	}
	if f.Status != "" {
		w.add("status = $%d", string(f.Status))
	}
	q := `SELECT ` + interventionCols + ` FROM interventions` + w.sql()
	rows, err := d.pool.Query(ctx, q+" ORDER BY created_at, id", w.args...)
	if err != nil {
		return nil, fmt.Errorf("list interventions: %w", err)
	}
	defer rows.Close()
	var out []store.Intervention
	for rows.Next() {
		in, err := scanIntervention(rows)
		if err != nil {
			return nil, fmt.Errorf("list interventions: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list interventions: %w", err)
	}
	return out, nil
}

// ReleaseIntervention implements [store.Store].
func (d *DB) ReleaseIntervention(ctx context.Context, id, claimer string) (store.Intervention, error) {
	var out store.Intervention
	err := d.write(ctx, "ReleaseIntervention", func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE interventions SET status = 'open', claimed_by = '', claimed_at = NULL
			WHERE id = $1 AND status = 'claimed' AND claimed_by = $2`, id, claimer)
		if err != nil {
			return fmt.Errorf("release intervention %s: %w", id, err)
		}
		n := res.RowsAffected()
		if out, err = getIntervention(ctx, tx, id); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("release intervention %s: %s by %q, not %q: %w", id, out.Status, out.ClaimedBy, claimer, store.ErrAlreadyClaimed)
		}
		return nil
	})
	if err != nil {
		return store.Intervention{}, err
	}
	return out, nil
}
