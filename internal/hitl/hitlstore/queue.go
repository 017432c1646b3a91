// Package hitlstore is the store adapter of hitl's intervention queue: it
// keeps each hitl.Waiting as a store.Intervention row, so a console
// restarted mid-wait (or another process on the same database) still sees
// why every session waits.
//
// It only translates between the two types and their errors; it never
// decides a transition (the hitl.Lease does) and never redacts (the broker
// queues summaries already redacted).
package hitlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/store"
)

// interventions is the part of store.Store the queue needs.
type interventions interface {
	EnqueueIntervention(ctx context.Context, in store.Intervention) (store.Intervention, error)
	ClaimIntervention(ctx context.Context, id, claimer string) (store.Intervention, error)
	ReleaseIntervention(ctx context.Context, id, claimer string) (store.Intervention, error)
	ResolveIntervention(ctx context.Context, id, resolution string) (store.Intervention, error)
	ListInterventions(ctx context.Context, f store.InterventionFilter) ([]store.Intervention, error)
}

// Queue implements hitl.Queue over a store. Safe for concurrent use.
type Queue struct{ st interventions }

var _ hitl.Queue = (*Queue)(nil)

// New returns the queue over st.
func New(st interventions) *Queue { return &Queue{st: st} }

func conflict(err error) error {
	if errors.Is(err, store.ErrAlreadyClaimed) || errors.Is(err, store.ErrAlreadyResolved) {
		return fmt.Errorf("%w: %w", hitl.ErrQueueConflict, err)
	}
	return err
}

// Put implements hitl.Queue.
func (q *Queue) Put(ctx context.Context, w hitl.Waiting) error {
	reason := string(w.FailureCode)
	if reason == "" {
		reason = "NEEDS_HUMAN"
	}
	var inputs json.RawMessage
	if len(w.Inputs) > 0 {
		b, err := json.Marshal(w.Inputs)
		if err != nil {
			return fmt.Errorf("intervention %s: inputs: %w", w.ID, err)
		}
		inputs = b
	}
	_, err := q.st.EnqueueIntervention(ctx, store.Intervention{
		ID: w.ID, SessionID: w.SessionID, RunID: w.RunID, Reason: reason, CreatedAt: w.CreatedAt,
		Capability: w.Capability, Step: w.Step, FailureCode: w.FailureCode, Effects: w.EffectsJSON(), Summary: w.Summary,
		Inputs: inputs, Screen: w.Screen, RelayAddr: w.Relay,
	})
	return err
}

// Claim implements hitl.Queue.
func (q *Queue) Claim(ctx context.Context, id, operator string) error {
	_, err := q.st.ClaimIntervention(ctx, id, operator)
	return conflict(err)
}

// Release implements hitl.Queue.
func (q *Queue) Release(ctx context.Context, id, operator string) error {
	_, err := q.st.ReleaseIntervention(ctx, id, operator)
	return conflict(err)
}

// Resolve implements hitl.Queue.
func (q *Queue) Resolve(ctx context.Context, id, resolution string) error {
	_, err := q.st.ResolveIntervention(ctx, id, resolution)
	return conflict(err)
}

// Pending implements hitl.Queue.
func (q *Queue) Pending(ctx context.Context) ([]hitl.Waiting, error) {
	var out []hitl.Waiting
	for _, status := range []store.InterventionStatus{store.InterventionOpen, store.InterventionClaimed} {
		rows, err := q.st.ListInterventions(ctx, store.InterventionFilter{Status: status})
		if err != nil {
			return nil, err
		}
		for _, in := range rows {
			w := hitl.Waiting{ID: in.ID, SessionID: in.SessionID, RunID: in.RunID, Capability: in.Capability,
				Step: in.Step, FailureCode: in.FailureCode, Summary: in.Summary, Status: hitl.WaitStatus(in.Status),
				ClaimedBy: in.ClaimedBy, CreatedAt: in.CreatedAt, Screen: in.Screen, Relay: in.RelayAddr}
			if w.Summary == "" {
				w.Summary = in.Reason // a row a worker queued when a run ended: its reason is why
			}
			if len(in.Inputs) > 0 {
				if err := json.Unmarshal(in.Inputs, &w.Inputs); err != nil {
					return nil, fmt.Errorf("intervention %s: inputs: %w", in.ID, err)
				}
			}
			if len(in.Effects) > 0 {
				var e domain.Effects
				if err := json.Unmarshal(in.Effects, &e); err != nil {
					return nil, fmt.Errorf("intervention %s: effects: %w", in.ID, err)
				}
				w.Effects = &e
			}
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b hitl.Waiting) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}
