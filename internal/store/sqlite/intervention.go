package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
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
	err := d.write(ctx, "EnqueueIntervention", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO interventions (id, session_id, run_id, reason, status, created_at,
			capability, step, failure_code, effects, summary, inputs, screen, relay_addr)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			in.ID, in.SessionID, in.RunID, in.Reason, string(in.Status), micro(in.CreatedAt),
			in.Capability, in.Step, string(in.FailureCode), nullJSON(in.Effects), in.Summary,
			nullJSON(in.Inputs), in.Screen, in.RelayAddr)
		if err != nil {
			return fmt.Errorf("enqueue intervention %s: %w", in.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
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
	err := d.write(ctx, "ClaimIntervention", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE interventions SET status = 'claimed', claimed_by = ?, claimed_at = ?
			WHERE id = ? AND status = 'open'`, claimer, micro(d.now()), id)
		if err != nil {
			return fmt.Errorf("claim intervention %s: %w", id, err)
		}
		n, _ := res.RowsAffected()
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
	err := d.write(ctx, "ResolveIntervention", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE interventions SET status = 'resolved', resolved_at = ?, resolution = ?
			WHERE id = ? AND status <> 'resolved'`, micro(d.now()), resolution, id)
		if err != nil {
			return fmt.Errorf("resolve intervention %s: %w", id, err)
		}
		n, _ := res.RowsAffected()
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
	in, err := scanIntervention(q.QueryRowContext(ctx, `SELECT `+interventionCols+` FROM interventions WHERE id = ?`, id))
	if err != nil {
		return store.Intervention{}, notFound(err, "intervention "+id)
	}
	return in, nil
}

func scanIntervention(s scanner) (store.Intervention, error) {
	var in store.Intervention
	var created, claimed, resolved sql.NullInt64
	var effects, inputs sql.NullString
	err := s.Scan(&in.ID, &in.SessionID, &in.RunID, &in.Reason, &in.Status, &created, &in.ClaimedBy, &claimed,
		&resolved, &in.Resolution, &in.Capability, &in.Step, &in.FailureCode, &effects, &in.Summary, &in.Verdict, &in.ResolvedBy, &in.Note,
		&inputs, &in.Screen, &in.RelayAddr)
	if err != nil {
		return store.Intervention{}, err
	}
	if effects.Valid {
		in.Effects = []byte(effects.String)
	}
	if inputs.Valid {
		in.Inputs = []byte(inputs.String)
	}
	in.CreatedAt, in.ClaimedAt, in.ResolvedAt = fromMicro(created), fromMicro(claimed), fromMicro(resolved)
	return in, nil
}

// ListInterventions implements [store.Store].
func (d *DB) ListInterventions(ctx context.Context, f store.InterventionFilter) ([]store.Intervention, error) {
	var where []string
	var args []any
	if f.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, f.SessionID)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	q := `SELECT ` + interventionCols + ` FROM interventions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := d.db.QueryContext(ctx, q+" ORDER BY created_at, id", args...)
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
	err := d.write(ctx, "ReleaseIntervention", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE interventions SET status = 'open', claimed_by = '', claimed_at = NULL
			WHERE id = ? AND status = 'claimed' AND claimed_by = ?`, id, claimer)
		if err != nil {
			return fmt.Errorf("release intervention %s: %w", id, err)
		}
		n, _ := res.RowsAffected()
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
