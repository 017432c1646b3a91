package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/store"
)

const jobKeyCols = `capability_id, key, inputs_digest, job_id, generation, created_at, released_at, released_by`

// ClaimJobKey implements [store.Store].
func (d *DB) ClaimJobKey(ctx context.Context, k store.JobKey) (store.JobKey, bool, error) {
	if err := k.Validate(); err != nil {
		return store.JobKey{}, false, err
	}
	k.CreatedAt = or(k.CreatedAt, d.now)
	var out store.JobKey
	created := false
	err := d.write(ctx, "ClaimJobKey", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO job_keys (`+jobKeyCols+`) VALUES (?, ?, ?, ?, ?, ?, NULL, '')
			ON CONFLICT DO NOTHING`, k.CapabilityID, k.Key, k.InputsDigest, k.JobID, k.Generation, micro(k.CreatedAt))
		if err != nil {
			return fmt.Errorf("claim job key %q of %s: %w", k.Key, k.CapabilityID, err)
		}
		n, _ := res.RowsAffected()
		created = n == 1
		out, err = getJobKey(ctx, tx, k.CapabilityID, k.Key)
		return err
	})
	if err != nil {
		return store.JobKey{}, false, err
	}
	return out, created, nil
}

// GetJobKey implements [store.Store].
func (d *DB) GetJobKey(ctx context.Context, capabilityID, key string) (store.JobKey, error) {
	return getJobKey(ctx, d.db, capabilityID, key)
}

// RebindJobKey implements [store.Store].
func (d *DB) RebindJobKey(ctx context.Context, k store.JobKey) (store.JobKey, error) {
	if err := k.Validate(); err != nil {
		return store.JobKey{}, err
	}
	var out store.JobKey
	err := d.write(ctx, "RebindJobKey", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_keys SET generation = generation + 1, job_id = 0, inputs_digest = ?,
			released_at = NULL, released_by = '' WHERE capability_id = ? AND key = ? AND generation = ?`,
			k.InputsDigest, k.CapabilityID, k.Key, k.Generation)
		if err != nil {
			return fmt.Errorf("rebind job key %q of %s: %w", k.Key, k.CapabilityID, err)
		}
		if out, err = getJobKey(ctx, tx, k.CapabilityID, k.Key); err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("rebind job key %q of %s: at generation %d, not %d: %w", k.Key, k.CapabilityID, out.Generation, k.Generation, store.ErrKeyMoved)
		}
		return nil
	})
	if err != nil {
		return store.JobKey{}, err
	}
	return out, nil
}

// SetJobKeyJob implements [store.Store].
func (d *DB) SetJobKeyJob(ctx context.Context, capabilityID, key string, generation, jobID int64) error {
	if jobID <= 0 {
		return fmt.Errorf("set job of key %q: job id %d: %w", key, jobID, store.ErrInvalid)
	}
	return d.write(ctx, "SetJobKeyJob", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_keys SET job_id = ? WHERE capability_id = ? AND key = ?
			AND generation = ? AND job_id IN (0, ?)`, jobID, capabilityID, key, generation, jobID)
		if err != nil {
			return fmt.Errorf("set job of key %q of %s: %w", key, capabilityID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := getJobKey(ctx, tx, capabilityID, key); err != nil {
				return err
			}
			return fmt.Errorf("set job %d of key %q of %s at generation %d: %w", jobID, key, capabilityID, generation, store.ErrKeyMoved)
		}
		return nil
	})
}

func getJobKey(ctx context.Context, q querier, capabilityID, key string) (store.JobKey, error) {
	var k store.JobKey
	var created, released sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT `+jobKeyCols+` FROM job_keys WHERE capability_id = ? AND key = ?`,
		capabilityID, key).Scan(&k.CapabilityID, &k.Key, &k.InputsDigest, &k.JobID, &k.Generation, &created, &released, &k.ReleasedBy)
	if err != nil {
		return store.JobKey{}, notFound(err, fmt.Sprintf("job key %q of %s", key, capabilityID))
	}
	k.CreatedAt, k.ReleasedAt = fromMicro(created), fromMicro(released)
	return k, nil
}

// SettleIntervention implements [store.Store].
func (d *DB) SettleIntervention(ctx context.Context, s store.Settlement) (store.Intervention, error) {
	if err := s.Validate(); err != nil {
		return store.Intervention{}, err
	}
	var out store.Intervention
	now := d.now()
	err := d.write(ctx, "SettleIntervention", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE interventions SET status = 'resolved', resolved_at = ?, resolution = ?,
			verdict = ?, resolved_by = ?, note = ? WHERE id = ? AND status <> 'resolved'`,
			micro(now), store.SettlementText(s), string(s.Verdict), s.By, s.Note, s.ID)
		if err != nil {
			return fmt.Errorf("settle intervention %s: %w", s.ID, err)
		}
		n, _ := res.RowsAffected()
		if out, err = getIntervention(ctx, tx, s.ID); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("settle intervention %s: resolved at %s by %q: %w", s.ID, out.ResolvedAt.Format(time.RFC3339), out.ResolvedBy, store.ErrAlreadyResolved)
		}
		if s.Release == nil {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE job_keys SET released_at = ?, released_by = ?
			WHERE capability_id = ? AND key = ? AND job_id = ?`, micro(now), s.By, s.Release.CapabilityID, s.Release.Key, s.ReleaseJobID)
		if err != nil {
			return fmt.Errorf("settle intervention %s: release key %q: %w", s.ID, s.Release.Key, err)
		}
		return nil
	})
	if err != nil {
		return store.Intervention{}, err
	}
	return out, nil
}
