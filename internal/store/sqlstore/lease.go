package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/store"
)

// AcquireLease implements [store.Store].
func (s *DB) AcquireLease(ctx context.Context, req store.LeaseRequest) (store.Lease, error) {
	if err := req.Validate(); err != nil {
		return store.Lease{}, err
	}
	var out store.Lease
	err := s.write(ctx, "AcquireLease", func(tx conn) error {
		now := s.now()
		// A first acquire inserts an expired epoch-0 row, so that the row
		// exists to lock: two processes acquiring a new session serialize
		// on it instead of both computing epoch 1. The upsert below
		// replaces it, or the transaction rolls back; GetLease hides it.
		if _, err := tx.exec(ctx, `INSERT INTO leases (session_id, holder, epoch, expires_at, updated_at)
			VALUES ($1, '', 0, $2, $2) ON CONFLICT (session_id) DO NOTHING`, req.SessionID, s.d.Time(time.Unix(0, 0).UTC())); err != nil {
			return fmt.Errorf("acquire lease %s: %w", req.SessionID, err)
		}
		cur, err := getLease(ctx, tx, req.SessionID, s.d.LockRow)
		if err != nil {
			return err
		}
		next, err := store.NextLease(cur, req, now)
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, `INSERT INTO leases (session_id, holder, epoch, expires_at, updated_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder,
			epoch = excluded.epoch, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
			next.SessionID, next.Holder, next.Epoch, s.ts(next.ExpiresAt), s.ts(next.UpdatedAt))
		if err != nil {
			return fmt.Errorf("acquire lease %s: %w", req.SessionID, err)
		}
		out = next
		return nil
	})
	return out, err
}

// RenewLease implements [store.Store].
func (s *DB) RenewLease(ctx context.Context, sessionID, holder string, epoch int64, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("renew lease %s: ttl %s is not positive: %w", sessionID, ttl, store.ErrInvalid)
	}
	var out store.Lease
	err := s.write(ctx, "RenewLease", func(tx conn) error {
		if err := s.moveLease(ctx, tx, "renew", sessionID, holder, epoch, ttl); err != nil {
			return err
		}
		var err error
		out, err = getLease(ctx, tx, sessionID, "")
		return err
	})
	return out, err
}

// ReleaseLease implements [store.Store].
func (s *DB) ReleaseLease(ctx context.Context, sessionID, holder string, epoch int64) error {
	return s.write(ctx, "ReleaseLease", func(tx conn) error {
		return s.moveLease(ctx, tx, "release", sessionID, holder, epoch, 0)
	})
}

// moveLease sets the expiry of the unexpired lease holder holds at epoch
// to now+ttl (ttl 0 ends it), or returns ErrLeaseLost.
func (s *DB) moveLease(ctx context.Context, tx conn, verb, sessionID, holder string, epoch int64, ttl time.Duration) error {
	now := s.now()
	n, err := tx.execN(ctx, `UPDATE leases SET expires_at = $1, updated_at = $2
		WHERE session_id = $3 AND holder = $4 AND epoch = $5 AND expires_at > $2`,
		s.ts(now.Add(ttl)), s.ts(now), sessionID, holder, epoch)
	if err != nil {
		return fmt.Errorf("%s lease %s: %w", verb, sessionID, err)
	}
	if n == 0 {
		return fmt.Errorf("%s lease %s for %s at epoch %d: %w", verb, sessionID, holder, epoch, store.ErrLeaseLost)
	}
	return nil
}

// GetLease implements [store.Store].
func (s *DB) GetLease(ctx context.Context, sessionID string) (store.Lease, error) {
	l, err := getLease(ctx, s.q(), sessionID, "")
	if err == nil && l.Epoch == 0 {
		return store.Lease{}, fmt.Errorf("lease %s: %w", sessionID, store.ErrNotFound)
	}
	return l, err
}

// getLease reads a lease; lock is "" or the dialect's LockRow.
func getLease(ctx context.Context, q conn, sessionID, lock string) (store.Lease, error) {
	var l store.Lease
	var expires, updated nullTime
	err := q.row(ctx, `SELECT session_id, holder, epoch, expires_at, updated_at FROM leases
		WHERE session_id = $1`+lock, sessionID).Scan(&l.SessionID, &l.Holder, &l.Epoch, &expires, &updated)
	if err != nil {
		return store.Lease{}, notFound(err, "lease "+sessionID)
	}
	l.ExpiresAt, l.UpdatedAt = expires.t, updated.t
	return l, nil
}
