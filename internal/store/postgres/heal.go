package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cuahq/cua/internal/store"
)

// AddHealProposal implements [store.HealStore].
func (d *DB) AddHealProposal(ctx context.Context, p store.HealProposal, t store.HealTransition) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return d.write(ctx, "AddHealProposal", func(tx pgx.Tx) error {
		res, err := tx.Exec(ctx, `INSERT INTO heal_proposals (id, capability_id, state, created_at, updated_at, doc)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
			p.ID, p.CapabilityID, p.State, ts(or(p.CreatedAt, d.now)), ts(d.now()), string(p.Doc))
		if err != nil {
			return fmt.Errorf("heal proposal %s: %w", p.ID, err)
		}
		if res.RowsAffected() == 0 {
			return fmt.Errorf("heal proposal %s: %w", p.ID, store.ErrExists)
		}
		return d.addHealTransition(ctx, tx, p.ID, t)
	})
}

func (d *DB) addHealTransition(ctx context.Context, tx pgx.Tx, id string, t store.HealTransition) error {
	if len(t.Doc) == 0 {
		return fmt.Errorf("heal proposal %s: transition doc is empty: %w", id, store.ErrInvalid)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO heal_transitions (proposal_id, at, doc) VALUES ($1, $2, $3)`,
		id, ts(or(t.At, d.now)), string(t.Doc)); err != nil {
		return fmt.Errorf("heal proposal %s: transition: %w", id, err)
	}
	return nil
}

// UpdateHealProposal implements [store.HealStore].
func (d *DB) UpdateHealProposal(ctx context.Context, p store.HealProposal, from string, t store.HealTransition, active *store.HealActive) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return d.write(ctx, "UpdateHealProposal", func(tx pgx.Tx) error {
		var state string
		if err := tx.QueryRow(ctx, `SELECT state FROM heal_proposals WHERE id = $1 FOR UPDATE`, p.ID).Scan(&state); err != nil {
			return notFound(err, "heal proposal "+p.ID)
		}
		if state != from {
			return fmt.Errorf("heal proposal %s is %s, not %s: %w", p.ID, state, from, store.ErrHealState)
		}
		now := d.now()
		if _, err := tx.Exec(ctx, `UPDATE heal_proposals SET state = $1, updated_at = $2, doc = $3 WHERE id = $4`,
			p.State, ts(now), string(p.Doc), p.ID); err != nil {
			return fmt.Errorf("heal proposal %s: %w", p.ID, err)
		}
		if err := d.addHealTransition(ctx, tx, p.ID, t); err != nil {
			return err
		}
		if active == nil {
			return nil
		}
		if active.CapabilityID == "" || len(active.Doc) == 0 {
			return fmt.Errorf("heal active of %s: capability_id or doc is empty: %w", p.ID, store.ErrInvalid)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO heal_active (capability_id, updated_at, doc) VALUES ($1, $2, $3)
			ON CONFLICT (capability_id) DO UPDATE SET updated_at = excluded.updated_at, doc = excluded.doc`,
			active.CapabilityID, ts(now), string(active.Doc)); err != nil {
			return fmt.Errorf("heal active %s: %w", active.CapabilityID, err)
		}
		return nil
	})
}

const healCols = `id, capability_id, state, created_at, updated_at, doc`

func scanHeal(sc pgx.Row) (store.HealProposal, error) {
	var p store.HealProposal
	var created, updated *time.Time
	var doc string
	if err := sc.Scan(&p.ID, &p.CapabilityID, &p.State, &created, &updated, &doc); err != nil {
		return p, err
	}
	p.CreatedAt, p.UpdatedAt, p.Doc = fromTS(created), fromTS(updated), []byte(doc)
	return p, nil
}

// GetHealProposal implements [store.HealStore].
func (d *DB) GetHealProposal(ctx context.Context, id string) (store.HealProposal, error) {
	p, err := scanHeal(d.pool.QueryRow(ctx, `SELECT `+healCols+` FROM heal_proposals WHERE id = $1`, id))
	if err != nil {
		return p, notFound(err, "heal proposal "+id)
	}
	return p, nil
}

// ListHealProposals implements [store.HealStore].
func (d *DB) ListHealProposals(ctx context.Context, capabilityID string) ([]store.HealProposal, error) {
	rows, err := d.pool.Query(ctx, `SELECT `+healCols+` FROM heal_proposals
		WHERE $1 = '' OR capability_id = $1 ORDER BY created_at, id`, capabilityID)
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
	rows, err := d.pool.Query(ctx, `SELECT seq, proposal_id, at, doc FROM heal_transitions
		WHERE proposal_id = $1 ORDER BY seq`, proposalID)
	if err != nil {
		return nil, fmt.Errorf("heal transitions of %s: %w", proposalID, err)
	}
	defer rows.Close()
	out := []store.HealTransition{}
	for rows.Next() {
		var t store.HealTransition
		var at *time.Time
		var doc string
		if err := rows.Scan(&t.Seq, &t.ProposalID, &at, &doc); err != nil {
			return nil, fmt.Errorf("heal transitions of %s: %w", proposalID, err)
		}
		t.At, t.Doc = fromTS(at), []byte(doc)
		out = append(out, t)
	}
	return out, rows.Err()
}

// GetHealActive implements [store.HealStore].
func (d *DB) GetHealActive(ctx context.Context, capabilityID string) (store.HealActive, error) {
	a := store.HealActive{CapabilityID: capabilityID}
	var at *time.Time
	var doc string
	if err := d.pool.QueryRow(ctx, `SELECT updated_at, doc FROM heal_active WHERE capability_id = $1`, capabilityID).Scan(&at, &doc); err != nil {
		return a, notFound(err, "heal active "+capabilityID)
	}
	a.UpdatedAt, a.Doc = fromTS(at), []byte(doc)
	return a, nil
}

var _ store.HealStore = (*DB)(nil)
