package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cuahq/cua/internal/store"
)

const principalCols = `name, role, secret_hash, created_at, created_by, disabled_at, failed_sign_ins, locked_until`

// AddPrincipal implements [store.Store].
func (d *DB) AddPrincipal(ctx context.Context, p store.PrincipalRecord) (store.PrincipalRecord, error) {
	if err := p.Validate(); err != nil {
		return store.PrincipalRecord{}, err
	}
	p.CreatedAt = or(p.CreatedAt, d.now)
	err := d.write(ctx, "AddPrincipal", func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, `INSERT INTO principals (`+principalCols+`)
			VALUES ($1, $2, $3, $4, $5, NULL, 0, NULL) ON CONFLICT (name) DO NOTHING`,
			p.Name, p.Role, p.SecretHash, ts(p.CreatedAt), p.CreatedBy)
		if err != nil {
			return fmt.Errorf("principal %s: %w", p.Name, err)
		}
		if res.RowsAffected() == 0 {
			return fmt.Errorf("principal %s: %w", p.Name, store.ErrExists)
		}
		return nil
	})
	if err != nil {
		return store.PrincipalRecord{}, err
	}
	return p, nil
}

// GetPrincipal implements [store.Store].
func (d *DB) GetPrincipal(ctx context.Context, name string) (store.PrincipalRecord, error) {
	return getPrincipal(ctx, d.pool, name)
}

func getPrincipal(ctx context.Context, q querier, name string) (store.PrincipalRecord, error) {
	p, err := scanPrincipal(q.QueryRow(ctx, `SELECT `+principalCols+` FROM principals WHERE name = $1`, name))
	if err != nil {
		return store.PrincipalRecord{}, notFound(err, "principal "+name)
	}
	return p, nil
}

func scanPrincipal(s scanner) (store.PrincipalRecord, error) {
	var p store.PrincipalRecord
	var created, disabled, locked *time.Time
	if err := s.Scan(&p.Name, &p.Role, &p.SecretHash, &created, &p.CreatedBy, &disabled, &p.FailedSignIns, &locked); err != nil {
		return store.PrincipalRecord{}, err
	}
	p.CreatedAt, p.DisabledAt, p.LockedUntil = fromTS(created), fromTS(disabled), fromTS(locked)
	return p, nil
}

// ListPrincipals implements [store.Store].
func (d *DB) ListPrincipals(ctx context.Context) ([]store.PrincipalRecord, error) {
	rows, err := d.pool.Query(ctx, `SELECT `+principalCols+` FROM principals ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list principals: %w", err)
	}
	defer rows.Close()
	var out []store.PrincipalRecord
	for rows.Next() {
		p, err := scanPrincipal(rows)
		if err != nil {
			return nil, fmt.Errorf("list principals: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list principals: %w", err)
	}
	return out, nil
}

// UpdatePrincipalSecret implements [store.Store].
func (d *DB) UpdatePrincipalSecret(ctx context.Context, name, hash string) (store.PrincipalRecord, error) {
	if hash == "" {
		return store.PrincipalRecord{}, fmt.Errorf("principal %s: secret hash is required: %w", name, store.ErrInvalid)
	}
	return d.updatePrincipal(ctx, "UpdatePrincipalSecret", name,
		`UPDATE principals SET secret_hash = $1, failed_sign_ins = 0, locked_until = NULL WHERE name = $2`, hash, name)
}

// DisablePrincipal implements [store.Store].
func (d *DB) DisablePrincipal(ctx context.Context, name string) (store.PrincipalRecord, error) {
	return d.updatePrincipal(ctx, "DisablePrincipal", name,
		`UPDATE principals SET disabled_at = COALESCE(disabled_at, $1) WHERE name = $2`, d.now(), name)
}

// NoteSignIn implements [store.Store]. One UPDATE reading the row's own
// count: PostgreSQL locks the row, so concurrent failures queue and none is
// lost.
func (d *DB) NoteSignIn(ctx context.Context, name string, ok bool, maxFailures int, lockFor time.Duration) (store.PrincipalRecord, error) {
	if maxFailures < 1 || lockFor <= 0 {
		return store.PrincipalRecord{}, fmt.Errorf("sign-in of %s: max failures and lock time must be positive: %w", name, store.ErrInvalid)
	}
	return d.updatePrincipal(ctx, "NoteSignIn", name, `UPDATE principals SET
		failed_sign_ins = CASE WHEN $1::boolean THEN 0 WHEN failed_sign_ins + 1 >= $2::integer THEN 0 ELSE failed_sign_ins + 1 END,
		locked_until = CASE WHEN NOT $1::boolean AND failed_sign_ins + 1 >= $2::integer THEN $3::timestamptz ELSE locked_until END
		WHERE name = $4`, ok, maxFailures, d.now().Add(lockFor), name)
}

// updatePrincipal runs one UPDATE of the principal name and returns the
// stored record, or ErrNotFound when no row matched.
func (d *DB) updatePrincipal(ctx context.Context, op, name, query string, args ...any) (store.PrincipalRecord, error) {
	var p store.PrincipalRecord
	err := d.write(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, query, args...); err != nil {
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
