package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cuahq/cua/internal/store"
)

// AddHealProposal implements [store.HealStore].
func (d *DB) AddHealProposal(ctx context.Context, p store.HealProposal, t store.HealTransition) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return d.write(ctx, "AddHealProposal", func(tx *sql.Tx) error {
		now := d.now()
		res, err := tx.ExecContext(ctx, `INSERT INTO heal_proposals (id, capability_id, state, created_at, updated_at, doc)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			p.ID, p.CapabilityID, p.State, micro(or(p.CreatedAt, d.now)), micro(now), string(p.Doc))
		if err != nil {
			return fmt.Errorf("heal proposal %s: %w", p.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("heal proposal %s: %w", p.ID, store.ErrExists)
		}
		return addHealTransition(ctx, tx, p.ID, t, d)
	})
}

func addHealTransition(ctx context.Context, tx *sql.Tx, id string, t store.HealTransition, d *DB) error {
	if len(t.Doc) == 0 {
		return fmt.Errorf("heal proposal %s: transition doc is empty: %w", id, store.ErrInvalid)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO heal_transitions (proposal_id, at, doc) VALUES (?, ?, ?)`,
		id, micro(or(t.At, d.now)), string(t.Doc))
	if err != nil {
		return fmt.Errorf("heal proposal %s: transition: %w", id, err)
	}
	return nil
}

// UpdateHealProposal implements [store.HealStore].
func (d *DB) UpdateHealProposal(ctx context.Context, p store.HealProposal, from string, t store.HealTransition, active *store.HealActive) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return d.write(ctx, "UpdateHealProposal", func(tx *sql.Tx) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM heal_proposals WHERE id = ?`, p.ID).Scan(&state)
		if err != nil {
			return notFound(err, "heal proposal "+p.ID)
		}
		if state != from {
			return fmt.Errorf("heal proposal %s is %s, not %s: %w", p.ID, state, from, store.ErrHealState)
		}
		now := d.now()
		if _, err := tx.ExecContext(ctx, `UPDATE heal_proposals SET state = ?, updated_at = ?, doc = ? WHERE id = ?`,
			p.State, micro(now), string(p.Doc), p.ID); err != nil {
			return fmt.Errorf("heal proposal %s: %w", p.ID, err)
		}
		if err := addHealTransition(ctx, tx, p.ID, t, d); err != nil {
			return err
		}
		if active == nil {
			return nil
		}
		if active.CapabilityID == "" || len(active.Doc) == 0 {
			return fmt.Errorf("heal active of %s: capability_id or doc is empty: %w", p.ID, store.ErrInvalid)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO heal_active (capability_id, updated_at, doc) VALUES (?, ?, ?)
			ON CONFLICT (capability_id) DO UPDATE SET updated_at = excluded.updated_at, doc = excluded.doc`,
			active.CapabilityID, micro(now), string(active.Doc))
		if err != nil {
			return fmt.Errorf("heal active %s: %w", active.CapabilityID, err)
		}
		return nil
	})
}

const healCols = `id, capability_id, state, created_at, updated_at, doc`

func scanHeal(sc interface{ Scan(...any) error }) (store.HealProposal, error) {
	var p store.HealProposal
	var created, updated sql.NullInt64
	var doc string
	if err := sc.Scan(&p.ID, &p.CapabilityID, &p.State, &created, &updated, &doc); err != nil {
		return p, err
	}
	p.CreatedAt, p.UpdatedAt, p.Doc = fromMicro(created), fromMicro(updated), []byte(doc)
	return p, nil
}

// GetHealProposal implements [store.HealStore].
func (d *DB) GetHealProposal(ctx context.Context, id string) (store.HealProposal, error) {
	p, err := scanHeal(d.db.QueryRowContext(ctx, `SELECT `+healCols+` FROM heal_proposals WHERE id = ?`, id))
	if err != nil {
		return p, notFound(err, "heal proposal "+id)
	}
	return p, nil
}

// ListHealProposals implements [store.HealStore].
func (d *DB) ListHealProposals(ctx context.Context, capabilityID string) ([]store.HealProposal, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT `+healCols+` FROM heal_proposals
		WHERE ? = '' OR capability_id = ? ORDER BY created_at, id`, capabilityID, capabilityID)
	if err != nil {
		return nil, fmt.Errorf("list heal proposals: %w", err)
	}
	defer rows.Close()
	out := []store.HealProposal{}
	for rows.Next() {
		p, err := scanHeal(rows)
		if err != nil {
			return nil, fmt.Errorf("list heal proposals: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ListHealTransitions implements [store.HealStore].
func (d *DB) ListHealTransitions(ctx context.Context, proposalID string) ([]store.HealTransition, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT seq, proposal_id, at, doc FROM heal_transitions
		WHERE proposal_id = ? ORDER BY seq`, proposalID)
	if err != nil {
		return nil, fmt.Errorf("heal transitions of %s: %w", proposalID, err)
	}
	defer rows.Close()
	out := []store.HealTransition{}
	for rows.Next() {
		var t store.HealTransition
		var at sql.NullInt64
		var doc string
		if err := rows.Scan(&t.Seq, &t.ProposalID, &at, &doc); err != nil {
			return nil, fmt.Errorf("heal transitions of %s: %w", proposalID, err)
		}
		t.At, t.Doc = fromMicro(at), []byte(doc)
		out = append(out, t)
	}
	return out, rows.Err()
}

// GetHealActive implements [store.HealStore].
func (d *DB) GetHealActive(ctx context.Context, capabilityID string) (store.HealActive, error) {
	a := store.HealActive{CapabilityID: capabilityID}
	var at sql.NullInt64
	var doc string
	err := d.db.QueryRowContext(ctx, `SELECT updated_at, doc FROM heal_active WHERE capability_id = ?`, capabilityID).Scan(&at, &doc)
	if err != nil {
		return a, notFound(err, "heal active "+capabilityID)
	}
	a.UpdatedAt, a.Doc = fromMicro(at), []byte(doc)
	return a, nil
}

var _ store.HealStore = (*DB)(nil)
