package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// AcquireLease implements [store.Store].
func (d *DB) AcquireLease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	if err := req.Validate(); err != nil {
		return store.Lease{}, err
	}
	var out store.Lease
	err := d.write(ctx, "AcquireLease", func(tx *sql.Tx) error {
		now := d.now()
		cur, err := getLease(ctx, tx, req.SessionID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		next, err := store.NextLease(cur, req, now)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO leases (session_id, holder, epoch, expires_at, updated_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder,
			epoch = excluded.epoch, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
			next.SessionID, next.Holder, next.Epoch, micro(next.ExpiresAt), micro(next.UpdatedAt))
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
	err := d.write(ctx, "RenewLease", func(tx *sql.Tx) error {
		now := d.now()
		res, err := tx.ExecContext(ctx, `UPDATE leases SET expires_at = ?, updated_at = ?
			WHERE session_id = ? AND holder = ? AND epoch = ? AND expires_at > ?`,
			micro(now.Add(ttl)), micro(now), sessionID, holder, epoch, micro(now))
		if err != nil {
			return fmt.Errorf("renew lease %s: %w", sessionID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("renew lease %s for %s at epoch %d: %w", sessionID, holder, epoch, store.ErrLeaseLost)
		}
		out, err = getLease(ctx, tx, sessionID)
		return err
	})
	return out, err
}

// ReleaseLease implements [store.Store].
func (d *DB) ReleaseLease(ctx context.Context, sessionID, holder string, epoch int64) error {
	return d.write(ctx, "ReleaseLease", func(tx *sql.Tx) error {
		now := d.now()
		res, err := tx.ExecContext(ctx, `UPDATE leases SET expires_at = ?, updated_at = ?
			WHERE session_id = ? AND holder = ? AND epoch = ? AND expires_at > ?`,
			micro(now), micro(now), sessionID, holder, epoch, micro(now))
		if err != nil {
			return fmt.Errorf("release lease %s: %w", sessionID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("release lease %s for %s at epoch %d: %w", sessionID, holder, epoch, store.ErrLeaseLost)
		}
		return nil
	})
}

// GetLease implements [store.Store].
func (d *DB) GetLease(ctx context.Context, sessionID string) (store.Lease, error) {
	return getLease(ctx, d.db, sessionID)
}

func getLease(ctx context.Context, q querier, sessionID string) (store.Lease, error) {
	var l store.Lease
	var expires, updated sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT session_id, holder, epoch, expires_at, updated_at FROM leases
		WHERE session_id = ?`, sessionID).Scan(&l.SessionID, &l.Holder, &l.Epoch, &expires, &updated)
	if err != nil {
		return store.Lease{}, notFound(err, "lease "+sessionID)
	}
	l.ExpiresAt, l.UpdatedAt = fromMicro(expires), fromMicro(updated)
	return l, nil
}
