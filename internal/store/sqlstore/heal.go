package sqlstore

import (
	"context"
	"fmt"

	"github.com/cuahq/cua/internal/store"
)

var _ store.HealStore = (*DB)(nil)

// AddHealProposal implements [store.HealStore].
func (s *DB) AddHealProposal(ctx context.Context, p store.HealProposal, t store.HealTransition) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return s.write(ctx, "AddHealProposal", func(tx conn) error {
		err := tx.insert(ctx, "heal proposal "+p.ID, `INSERT INTO heal_proposals (id, capability_id, state, created_at,
			updated_at, doc) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
			p.ID, p.CapabilityID, p.State, s.ts(or(p.CreatedAt, s.now)), s.ts(s.now()), string(p.Doc))
		if err != nil {
			return err
		}
		return s.addHealTransition(ctx, tx, p.ID, t)
	})
}

func (s *DB) addHealTransition(ctx context.Context, tx conn, id string, t store.HealTransition) error {
	if len(t.Doc) == 0 {
		return fmt.Errorf("heal proposal %s: transition doc is empty: %w", id, store.ErrInvalid)
	}
	if _, err := tx.exec(ctx, `INSERT INTO heal_transitions (proposal_id, at, doc) VALUES ($1, $2, $3)`,
		id, s.ts(or(t.At, s.now)), string(t.Doc)); err != nil {
		return fmt.Errorf("heal proposal %s: transition: %w", id, err)
	}
	return nil
}

// UpdateHealProposal implements [store.HealStore].
func (s *DB) UpdateHealProposal(ctx context.Context, p store.HealProposal, from string, t store.HealTransition, active *store.HealActive) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return s.write(ctx, "UpdateHealProposal", func(tx conn) error {
		var state string
		if err := tx.row(ctx, `SELECT state FROM heal_proposals WHERE id = $1`+s.d.LockRow, p.ID).Scan(&state); err != nil {
			return notFound(err, "heal proposal "+p.ID)
		}
		if state != from {
			return fmt.Errorf("heal proposal %s is %s, not %s: %w", p.ID, state, from, store.ErrHealState)
		}
		now := s.ts(s.now())
		if _, err := tx.exec(ctx, `UPDATE heal_proposals SET state = $1, updated_at = $2, doc = $3 WHERE id = $4`,
			p.State, now, string(p.Doc), p.ID); err != nil {
			return fmt.Errorf("heal proposal %s: %w", p.ID, err)
		}
		if err := s.addHealTransition(ctx, tx, p.ID, t); err != nil {
			return err
		}
		if active == nil {
			return nil
		}
		if active.CapabilityID == "" || len(active.Doc) == 0 {
			return fmt.Errorf("heal active of %s: capability_id or doc is empty: %w", p.ID, store.ErrInvalid)
		}
		if _, err := tx.exec(ctx, `INSERT INTO heal_active (capability_id, updated_at, doc) VALUES ($1, $2, $3)
			ON CONFLICT (capability_id) DO UPDATE SET updated_at = excluded.updated_at, doc = excluded.doc`,
			active.CapabilityID, now, string(active.Doc)); err != nil {
			return fmt.Errorf("heal active %s: %w", active.CapabilityID, err)
		}
		return nil
	})
}

const healCols = `id, capability_id, state, created_at, updated_at, doc`

func scanHeal(r scanner) (store.HealProposal, error) {
	var p store.HealProposal
	var created, updated nullTime
	var doc string
	if err := r.Scan(&p.ID, &p.CapabilityID, &p.State, &created, &updated, &doc); err != nil {
		return p, err
	}
	p.CreatedAt, p.UpdatedAt, p.Doc = created.t, updated.t, []byte(doc)
	return p, nil
}

// GetHealProposal implements [store.HealStore].
func (s *DB) GetHealProposal(ctx context.Context, id string) (store.HealProposal, error) {
	p, err := scanHeal(s.q().row(ctx, `SELECT `+healCols+` FROM heal_proposals WHERE id = $1`, id))
	if err != nil {
		return p, notFound(err, "heal proposal "+id)
	}
	return p, nil
}

// ListHealProposals implements [store.HealStore]; none is an empty slice.
func (s *DB) ListHealProposals(ctx context.Context, capabilityID string) ([]store.HealProposal, error) {
	var w where
	w.eq("capability_id", capabilityID)
	out, err := list(ctx, s.q(), "heal proposals", scanHeal,
		`SELECT `+healCols+` FROM heal_proposals`+w.sql()+` ORDER BY created_at, id`, w.args...)
	if out == nil && err == nil {
		out = []store.HealProposal{}
	}
	return out, err
}

// ListHealTransitions implements [store.HealStore]; none is an empty slice.
func (s *DB) ListHealTransitions(ctx context.Context, proposalID string) ([]store.HealTransition, error) {
	out, err := list(ctx, s.q(), "heal transitions of "+proposalID, func(r scanner) (store.HealTransition, error) {
		var t store.HealTransition
		var at nullTime
		var doc string
		err := r.Scan(&t.Seq, &t.ProposalID, &at, &doc)
		t.At, t.Doc = at.t, []byte(doc)
		return t, err
	}, `SELECT seq, proposal_id, at, doc FROM heal_transitions WHERE proposal_id = $1 ORDER BY seq`, proposalID)
	if out == nil && err == nil {
		out = []store.HealTransition{}
	}
	return out, err
}

// GetHealActive implements [store.HealStore].
func (s *DB) GetHealActive(ctx context.Context, capabilityID string) (store.HealActive, error) {
	a := store.HealActive{CapabilityID: capabilityID}
	var at nullTime
	var doc string
	err := s.q().row(ctx, `SELECT updated_at, doc FROM heal_active WHERE capability_id = $1`, capabilityID).Scan(&at, &doc)
	if err != nil {
		return a, notFound(err, "heal active "+capabilityID)
	}
	a.UpdatedAt, a.Doc = at.t, []byte(doc)
	return a, nil
}
