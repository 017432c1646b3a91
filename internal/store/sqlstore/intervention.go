package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/store"
)

const interventionCols = `id, session_id, run_id, reason, status, created_at, claimed_by, claimed_at,
	resolved_at, resolution, capability, step, failure_code, effects, summary, verdict, resolved_by, note, inputs, screen, relay_addr`

// EnqueueIntervention implements [store.Store].
func (s *DB) EnqueueIntervention(ctx context.Context, in store.Intervention) (store.Intervention, error) {
	if err := in.Validate(); err != nil {
		return store.Intervention{}, err
	}
	in.CreatedAt = or(in.CreatedAt, s.now)
	in.Status, in.ClaimedBy, in.ClaimedAt, in.ResolvedAt, in.Resolution = store.InterventionOpen, "", time.Time{}, time.Time{}, ""
	err := s.write(ctx, "EnqueueIntervention", func(tx conn) error {
		return tx.insert(ctx, "enqueue intervention "+in.ID, `INSERT INTO interventions (id, session_id, run_id, reason,
			status, created_at, capability, step, failure_code, effects, summary, inputs, screen, relay_addr)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING`,
			in.ID, in.SessionID, in.RunID, in.Reason, string(in.Status), s.ts(in.CreatedAt),
			in.Capability, in.Step, string(in.FailureCode), nullJSON(in.Effects), in.Summary,
			nullJSON(in.Inputs), in.Screen, in.RelayAddr)
	})
	if err != nil {
		return store.Intervention{}, err
	}
	return in, nil
}

// ClaimIntervention implements [store.Store].
func (s *DB) ClaimIntervention(ctx context.Context, id, claimer string) (store.Intervention, error) {
	if claimer == "" {
		return store.Intervention{}, fmt.Errorf("claim intervention %s: claimer is required: %w", id, store.ErrInvalid)
	}
	return s.moveIntervention(ctx, "ClaimIntervention", "claim", id, func(out store.Intervention) error {
		return fmt.Errorf("claim intervention %s: %s by %q: %w", id, out.Status, out.ClaimedBy, store.ErrAlreadyClaimed)
	}, `UPDATE interventions SET status = 'claimed', claimed_by = $1, claimed_at = $2
		WHERE id = $3 AND status = 'open'`, claimer, s.ts(s.now()), id)
}

// ResolveIntervention implements [store.Store].
func (s *DB) ResolveIntervention(ctx context.Context, id, resolution string) (store.Intervention, error) {
	return s.moveIntervention(ctx, "ResolveIntervention", "resolve", id, func(store.Intervention) error {
		return fmt.Errorf("resolve intervention %s: %w", id, store.ErrAlreadyResolved)
	}, `UPDATE interventions SET status = 'resolved', resolved_at = $1, resolution = $2
		WHERE id = $3 AND status <> 'resolved'`, s.ts(s.now()), resolution, id)
}

// ReleaseIntervention implements [store.Store].
func (s *DB) ReleaseIntervention(ctx context.Context, id, claimer string) (store.Intervention, error) {
	return s.moveIntervention(ctx, "ReleaseIntervention", "release", id, func(out store.Intervention) error {
		return fmt.Errorf("release intervention %s: %s by %q, not %q: %w", id, out.Status, out.ClaimedBy, claimer, store.ErrAlreadyClaimed)
	}, `UPDATE interventions SET status = 'open', claimed_by = '', claimed_at = NULL
		WHERE id = $1 AND status = 'claimed' AND claimed_by = $2`, id, claimer)
}

// moveIntervention runs one conditional UPDATE of intervention id in the
// write op (verb names it in errors) and returns the stored row; when the
// UPDATE matched no row, the error refused makes of that row.
func (s *DB) moveIntervention(ctx context.Context, op, verb, id string, refused func(store.Intervention) error, q string, args ...any) (store.Intervention, error) {
	var out store.Intervention
	err := s.write(ctx, op, func(tx conn) error {
		n, err := tx.execN(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("%s intervention %s: %w", verb, id, err)
		}
		if out, err = getIntervention(ctx, tx, id); err != nil {
			return err
		}
		if n == 0 {
			return refused(out)
		}
		return nil
	})
	if err != nil {
		return store.Intervention{}, err
	}
	return out, nil
}

func getIntervention(ctx context.Context, q conn, id string) (store.Intervention, error) {
	in, err := scanIntervention(q.row(ctx, `SELECT `+interventionCols+` FROM interventions WHERE id = $1`, id))
	if err != nil {
		return store.Intervention{}, notFound(err, "intervention "+id)
	}
	return in, nil
}

func scanIntervention(r scanner) (store.Intervention, error) {
	var in store.Intervention
	var created, claimed, resolved nullTime
	var effects, inputs sql.NullString
	err := r.Scan(&in.ID, &in.SessionID, &in.RunID, &in.Reason, &in.Status, &created, &in.ClaimedBy, &claimed,
		&resolved, &in.Resolution, &in.Capability, &in.Step, &in.FailureCode, &effects, &in.Summary, &in.Verdict, &in.ResolvedBy, &in.Note,
		&inputs, &in.Screen, &in.RelayAddr)
	if err != nil {
		return store.Intervention{}, err
	}
	in.Effects, in.Inputs = bytesOf(effects), bytesOf(inputs)
	in.CreatedAt, in.ClaimedAt, in.ResolvedAt = created.t, claimed.t, resolved.t
	return in, nil
}

// ListInterventions implements [store.Store].
func (s *DB) ListInterventions(ctx context.Context, f store.InterventionFilter) ([]store.Intervention, error) {
	var w where
	w.eq("session_id", f.SessionID)
	w.eq("status", string(f.Status))
	return list(ctx, s.q(), "interventions", scanIntervention,
		`SELECT `+interventionCols+` FROM interventions`+w.sql()+` ORDER BY created_at, id`, w.args...)
}
