package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/store"
)

const jobKeyCols = `capability_id, key, inputs_digest, job_id, generation, created_at, released_at, released_by`

// ClaimJobKey implements [store.Store].
func (s *DB) ClaimJobKey(ctx context.Context, k store.JobKey) (store.JobKey, bool, error) {
	if err := k.Validate(); err != nil {
		return store.JobKey{}, false, err
	}
	k.CreatedAt = or(k.CreatedAt, s.now)
	var out store.JobKey
	created := false
	err := s.write(ctx, "ClaimJobKey", func(tx conn) error {
		n, err := tx.execN(ctx, `INSERT INTO job_keys (`+jobKeyCols+`) VALUES ($1, $2, $3, $4, $5, $6, NULL, '')
			ON CONFLICT DO NOTHING`, k.CapabilityID, k.Key, k.InputsDigest, k.JobID, k.Generation, s.ts(k.CreatedAt))
		if err != nil {
			return fmt.Errorf("claim job key %q of %s: %w", k.Key, k.CapabilityID, err)
		}
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
func (s *DB) GetJobKey(ctx context.Context, capabilityID, key string) (store.JobKey, error) {
	return getJobKey(ctx, s.q(), capabilityID, key)
}

// RebindJobKey implements [store.Store].
func (s *DB) RebindJobKey(ctx context.Context, k store.JobKey) (store.JobKey, error) {
	if err := k.Validate(); err != nil {
		return store.JobKey{}, err
	}
	var out store.JobKey
	err := s.write(ctx, "RebindJobKey", func(tx conn) error {
		n, err := tx.execN(ctx, `UPDATE job_keys SET generation = generation + 1, job_id = 0, inputs_digest = $1,
			released_at = NULL, released_by = '' WHERE capability_id = $2 AND key = $3 AND generation = $4`,
			k.InputsDigest, k.CapabilityID, k.Key, k.Generation)
		if err != nil {
			return fmt.Errorf("rebind job key %q of %s: %w", k.Key, k.CapabilityID, err)
		}
		if out, err = getJobKey(ctx, tx, k.CapabilityID, k.Key); err != nil {
			return err
		}
		if n == 0 {
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
func (s *DB) SetJobKeyJob(ctx context.Context, capabilityID, key string, generation, jobID int64) error {
	if jobID <= 0 {
		return fmt.Errorf("set job of key %q: job id %d: %w", key, jobID, store.ErrInvalid)
	}
	return s.write(ctx, "SetJobKeyJob", func(tx conn) error {
		n, err := tx.execN(ctx, `UPDATE job_keys SET job_id = $1 WHERE capability_id = $2 AND key = $3
			AND generation = $4 AND job_id IN (0, $1)`, jobID, capabilityID, key, generation)
		if err != nil {
			return fmt.Errorf("set job of key %q of %s: %w", key, capabilityID, err)
		}
		if n == 0 {
			if _, err := getJobKey(ctx, tx, capabilityID, key); err != nil {
				return err
			}
			return fmt.Errorf("set job %d of key %q of %s at generation %d: %w", jobID, key, capabilityID, generation, store.ErrKeyMoved)
		}
		return nil
	})
}

func getJobKey(ctx context.Context, q conn, capabilityID, key string) (store.JobKey, error) {
	var k store.JobKey
	var created, released nullTime
	err := q.row(ctx, `SELECT `+jobKeyCols+` FROM job_keys WHERE capability_id = $1 AND key = $2`,
		capabilityID, key).Scan(&k.CapabilityID, &k.Key, &k.InputsDigest, &k.JobID, &k.Generation, &created, &released, &k.ReleasedBy)
	if err != nil {
		return store.JobKey{}, notFound(err, fmt.Sprintf("job key %q of %s", key, capabilityID))
	}
	k.CreatedAt, k.ReleasedAt = created.t, released.t
	return k, nil
}

// SettleIntervention implements [store.Store].
func (s *DB) SettleIntervention(ctx context.Context, st store.Settlement) (store.Intervention, error) {
	if err := st.Validate(); err != nil {
		return store.Intervention{}, err
	}
	var out store.Intervention
	now := s.ts(s.now())
	err := s.write(ctx, "SettleIntervention", func(tx conn) error {
		n, err := tx.execN(ctx, `UPDATE interventions SET status = 'resolved', resolved_at = $1, resolution = $2,
			verdict = $3, resolved_by = $4, note = $5 WHERE id = $6 AND status <> 'resolved'`,
			now, store.SettlementText(st), string(st.Verdict), st.By, st.Note, st.ID)
		if err != nil {
			return fmt.Errorf("settle intervention %s: %w", st.ID, err)
		}
		if out, err = getIntervention(ctx, tx, st.ID); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("settle intervention %s: resolved at %s by %q: %w", st.ID, out.ResolvedAt.Format(time.RFC3339), out.ResolvedBy, store.ErrAlreadyResolved)
		}
		if st.Release == nil {
			return nil
		}
		_, err = tx.exec(ctx, `UPDATE job_keys SET released_at = $1, released_by = $2
			WHERE capability_id = $3 AND key = $4 AND job_id = $5`, now, st.By, st.Release.CapabilityID, st.Release.Key, st.ReleaseJobID)
		if err != nil {
			return fmt.Errorf("settle intervention %s: release key %q: %w", st.ID, st.Release.Key, err)
		}
		return nil
	})
	if err != nil {
		return store.Intervention{}, err
	}
	return out, nil
}
