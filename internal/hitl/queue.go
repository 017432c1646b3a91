package hitl

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/cuahq/cua/internal/domain"
)

// WaitStatus is where an intervention is in the queue.
type WaitStatus string

// Queue statuses, as the store keeps them.
const (
	WaitOpen     WaitStatus = "open"
	WaitClaimed  WaitStatus = "claimed"
	WaitResolved WaitStatus = "resolved"
)

// Waiting is one row of the intervention queue: why a session waits for a
// person and what it did so far. Summary is redacted before it is queued.
type Waiting struct {
	ID          string             `json:"id"`
	SessionID   string             `json:"session_id"`
	RunID       string             `json:"run_id"`
	Capability  string             `json:"capability"`
	Step        string             `json:"step"`
	FailureCode domain.FailureCode `json:"failure_code"`
	Effects     *domain.Effects    `json:"effects,omitempty"`
	Summary     string             `json:"summary"`
	// Inputs are the run's inputs as the queue may show them: a sensitive
	// one masked (never its value).
	Inputs map[string]string `json:"inputs,omitempty"`
	// Screen is a redacted summary of the screen the run parked on.
	Screen string `json:"screen,omitempty"`
	// Relay is the base URL of the session relay of the worker holding the
	// session live; "" when it is held in this process or by nobody.
	Relay     string     `json:"relay,omitempty"`
	Status    WaitStatus `json:"status"`
	ClaimedBy string     `json:"claimed_by,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	// Lease is the live lease when the session lives in this process; nil
	// for a session queued by a process that is gone (or another one).
	Lease *Status `json:"lease,omitempty"`
}

// EffectsJSON returns the effects as JSON, nil when there are none.
func (w Waiting) EffectsJSON() json.RawMessage {
	if w.Effects == nil {
		return nil
	}
	b, err := json.Marshal(w.Effects)
	if err != nil {
		return nil
	}
	return b
}

// ErrQueueConflict is what a Queue returns when a row is not in the status
// a change needs (claimed by another operator, already resolved).
var ErrQueueConflict = errors.New("intervention queue conflict")

// Queue is the persistence port of the intervention queue; hitl/hitlstore
// implements it over the store. Every method is safe for concurrent use
// and atomic; a row survives the process that wrote it.
type Queue interface {
	// Put stores a new open row.
	Put(ctx context.Context, w Waiting) error
	// Claim marks an open row claimed by operator; ErrQueueConflict when
	// it is not open.
	Claim(ctx context.Context, id, operator string) error
	// Release reopens a row operator claimed; ErrQueueConflict otherwise.
	Release(ctx context.Context, id, operator string) error
	// Resolve closes a row with a resolution.
	Resolve(ctx context.Context, id, resolution string) error
	// Pending returns the open and claimed rows, oldest first.
	Pending(ctx context.Context) ([]Waiting, error)
}
