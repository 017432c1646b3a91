package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/store"
)

const principalCols = `name, role, secret_hash, created_at, created_by, disabled_at, failed_sign_ins, locked_until`

// AddPrincipal implements [store.Store].
func (s *DB) AddPrincipal(ctx context.Context, p store.PrincipalRecord) (store.PrincipalRecord, error) {
	if err := p.Validate(); err != nil {
		return store.PrincipalRecord{}, err
	}
	p.CreatedAt = or(p.CreatedAt, s.now)
	err := s.write(ctx, "AddPrincipal", func(tx conn) error {
		return tx.insert(ctx, "principal "+p.Name, `INSERT INTO principals (`+principalCols+`)
			VALUES ($1, $2, $3, $4, $5, NULL, 0, NULL) ON CONFLICT (name) DO NOTHING`,
			p.Name, p.Role, p.SecretHash, s.ts(p.CreatedAt), p.CreatedBy)
	})
	if err != nil {
		return store.PrincipalRecord{}, err
	}
	return p, nil
}

// GetPrincipal implements [store.Store].
func (s *DB) GetPrincipal(ctx context.Context, name string) (store.PrincipalRecord, error) {
	return getPrincipal(ctx, s.q(), name)
}

func getPrincipal(ctx context.Context, q conn, name string) (store.PrincipalRecord, error) {
	p, err := scanPrincipal(q.row(ctx, `SELECT `+principalCols+` FROM principals WHERE name = $1`, name))
	if err != nil {
		return store.PrincipalRecord{}, notFound(err, "principal "+name)
	}
	return p, nil
}

func scanPrincipal(r scanner) (store.PrincipalRecord, error) {
	var p store.PrincipalRecord
	var created, disabled, locked nullTime
	if err := r.Scan(&p.Name, &p.Role, &p.SecretHash, &created, &p.CreatedBy, &disabled, &p.FailedSignIns, &locked); err != nil {
		return store.PrincipalRecord{}, err
	}
	p.CreatedAt, p.DisabledAt, p.LockedUntil = created.t, disabled.t, locked.t
	return p, nil
}

// ListPrincipals implements [store.Store].
func (s *DB) ListPrincipals(ctx context.Context) ([]store.PrincipalRecord, error) {
	return list(ctx, s.q(), "principals", scanPrincipal, `SELECT `+principalCols+` FROM principals ORDER BY name`)
}

// UpdatePrincipalSecret implements [store.Store].
func (s *DB) UpdatePrincipalSecret(ctx context.Context, name, hash string) (store.PrincipalRecord, error) {
	if hash == "" {
		return store.PrincipalRecord{}, fmt.Errorf("principal %s: secret hash is required: %w", name, store.ErrInvalid)
	}
	return s.updatePrincipal(ctx, "UpdatePrincipalSecret", name,
		`UPDATE principals SET secret_hash = $1, failed_sign_ins = 0, locked_until = NULL WHERE name = $2`, hash, name)
}

// DisablePrincipal implements [store.Store].
func (s *DB) DisablePrincipal(ctx context.Context, name string) (store.PrincipalRecord, error) {
	return s.updatePrincipal(ctx, "DisablePrincipal", name,
		`UPDATE principals SET disabled_at = COALESCE(disabled_at, $1) WHERE name = $2`, s.ts(s.now()), name)
}

// NoteSignIn implements [store.Store]. One UPDATE that reads the row's own
// count: the write transaction (BEGIN IMMEDIATE on SQLite, the row lock
// on PostgreSQL) queues concurrent failures, so none is lost.
func (s *DB) NoteSignIn(ctx context.Context, name string, ok bool, maxFailures int, lockFor time.Duration) (store.PrincipalRecord, error) {
	if maxFailures < 1 || lockFor <= 0 {
		return store.PrincipalRecord{}, fmt.Errorf("sign-in of %s: max failures and lock time must be positive: %w", name, store.ErrInvalid)
	}
	if ok {
		return s.updatePrincipal(ctx, "NoteSignIn", name, `UPDATE principals SET failed_sign_ins = 0 WHERE name = $1`, name)
	}
	return s.updatePrincipal(ctx, "NoteSignIn", name, `UPDATE principals SET
		failed_sign_ins = CASE WHEN failed_sign_ins + 1 >= $1 THEN 0 ELSE failed_sign_ins + 1 END,
		locked_until = CASE WHEN failed_sign_ins + 1 >= $1 THEN $2 ELSE locked_until END
		WHERE name = $3`, maxFailures, s.ts(s.now().Add(lockFor)), name)
}

// updatePrincipal runs one UPDATE of the principal name and returns the
// stored record, or ErrNotFound when no row matched.
func (s *DB) updatePrincipal(ctx context.Context, op, name, query string, args ...any) (store.PrincipalRecord, error) {
	var p store.PrincipalRecord
	err := s.write(ctx, op, func(tx conn) error {
		if _, err := tx.exec(ctx, query, args...); err != nil {
			return fmt.Errorf("principal %s: %w", name, err)
		}
		var err error
		p, err = getPrincipal(ctx, tx, name)
		return err
	})
	if err != nil {
		return store.PrincipalRecord{}, err
	}
	return p, nil
}
