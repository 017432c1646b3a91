package postgres

import (
	"context"
	"fmt"
	"github.com/jackc/pgx/v5"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// AcquireLease implements [store.Store].
func (d *DB) AcquireLease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	if err := req.Validate(); err != nil {
		return store.Lease{}, err
	}
	var out store.Lease
	err := d.write(ctx, "AcquireLease", func(tx pgx.Tx) error {
		now := d.now()
		// A first acquire inserts an expired epoch-0 row, so that the row
		// exists to lock: two processes acquiring a new session serialize
		// on it instead of both computing epoch 1.
		if _, err := tx.Exec(ctx, `INSERT INTO leases (session_id, holder, epoch, expires_at, updated_at)
			VALUES ($1, '', 0, $2, $2) ON CONFLICT (session_id) DO NOTHING`, req.SessionID, time.Unix(0, 0).UTC()); err != nil {
			return fmt.Errorf("acquire lease %s: %w", req.SessionID, err)
		}
		cur, err := getLease(ctx, tx, req.SessionID, " FOR UPDATE")
		if err != nil {
			return err
		}
		next, err := store.NextLease(cur, req, now)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO leases (session_id, holder, epoch, expires_at, updated_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder,
			epoch = excluded.epoch, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
			next.SessionID, next.Holder, next.Epoch, ts(next.ExpiresAt), ts(next.UpdatedAt))
		if err != nil {
			return fmt.Errorf("acquire lease %s: %w", req.SessionID, err)
		}
		out = next
		return nil
	})
	return out, err
}

// RenewLease implements [store.Store].
func (d *DB) RenewLease(ctx context.Context, sessionID, holder string, epoch int64, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("renew lease %s: ttl %s is not positive: %w", sessionID, ttl, store.ErrInvalid)
	}
	var out store.Lease
	err := d.write(ctx, "RenewLease", func(tx pgx.Tx) error {
		now := d.now()
		res, err := tx.Exec(ctx, `UPDATE leases SET expires_at = $1, updated_at = $2
			WHERE session_id = $3 AND holder = $4 AND epoch = $5 AND expires_at > $6`,
			ts(now.Add(ttl)), ts(now), sessionID, holder, epoch, ts(now))
		if err != nil {
			return fmt.Errorf("renew lease %s: %w", sessionID, err)
		}
		if n := res.RowsAffected(); n == 0 {
			return fmt.Errorf("renew lease %s for %s at epoch %d: %w", sessionID, holder, epoch, store.ErrLeaseLost)
		}
		out, err = getLease(ctx, tx, sessionID, "")
		return err
	})
	return out, err
}

// ReleaseLease implements [store.Store].
func (d *DB) ReleaseLease(ctx context.Context, sessionID, holder string, epoch int64) error {
	return d.write(ctx, "ReleaseLease", func(tx pgx.Tx) error {
		now := d.now()
		res, err := tx.Exec(ctx, `UPDATE leases SET expires_at = $1, updated_at = $2
			WHERE session_id = $3 AND holder = $4 AND epoch = $5 AND expires_at > $6`,
			ts(now), ts(now), sessionID, holder, epoch, ts(now))
		if err != nil {
			return fmt.Errorf("release lease %s: %w", sessionID, err)
		}
		if n := res.RowsAffected(); n == 0 {
			return fmt.Errorf("release lease %s for %s at epoch %d: %w", sessionID, holder, epoch, store.ErrLeaseLost)
		}
		return nil
	})
}

// GetLease implements [store.Store].
func (d *DB) GetLease(ctx context.Context, sessionID string) (store.Lease, error) {
	l, err := getLease(ctx, d.pool, sessionID, "")
	if err == nil && l.Epoch == 0 {
		return store.Lease{}, fmt.Errorf("lease %s: %w", sessionID, store.ErrNotFound)
	}
	return l, err
}

// getLease reads a lease; lock is "" or " FOR UPDATE".
func getLease(ctx context.Context, q querier, sessionID, lock string) (store.Lease, error) {
	var l store.Lease
	var expires, updated *time.Time
	err := q.QueryRow(ctx, `SELECT session_id, holder, epoch, expires_at, updated_at FROM leases
		WHERE session_id = $1`+lock, sessionID).Scan(&l.SessionID, &l.Holder, &l.Epoch, &expires, &updated)
	if err != nil {
		return store.Lease{}, notFound(err, "lease "+sessionID)
	}
	l.ExpiresAt, l.UpdatedAt = fromTS(expires), fromTS(updated)
	return l, nil
}
