package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Job is a run in the queue as clients see it.
type Job struct {
	ID    int64   `json:"id"`
	State string  `json:"state"`
	Args  RunArgs `json:"args"`
	// Attempt is how many times a worker took it.
	Attempt int `json:"attempt"`
	// Result is set once a worker finished it (or refused it).
	Result *Result `json:"result,omitempty"`
	// AttemptedBy names the River clients (worker processes) that took it.
	AttemptedBy []string `json:"attempted_by,omitempty"`
	// Errors are the failed attempts' errors, oldest first.
	Errors      []string   `json:"errors,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	FinalizedAt *time.Time `json:"finalized_at,omitempty"`
	// Duplicate is set by Submit when the idempotency key named an
	// existing job, which is returned instead of a new one.
	Duplicate bool `json:"duplicate,omitempty"`
	// AlreadyRan is set with Duplicate once the key's job ran (or was
	// queued): its run and when it began.
	AlreadyRan *AlreadyRan `json:"already_ran,omitempty"`

	attemptedAt time.Time // when its current attempt began
}

// Final reports whether the job will not change any more.
func (j *Job) Final() bool {
	switch rivertype.JobState(j.State) {
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		return true
	}
	return false
}

// ErrNotFound is returned for a job id the queue does not hold.
var ErrNotFound = errors.New("no such job")

func jobOf(row *rivertype.JobRow) (*Job, error) {
	j := &Job{ID: row.ID, State: string(row.State), Attempt: row.Attempt, CreatedAt: row.CreatedAt, FinalizedAt: row.FinalizedAt}
	if err := json.Unmarshal(row.EncodedArgs, &j.Args); err != nil {
		return nil, fmt.Errorf("job %d: args: %w", row.ID, err)
	}
	var md struct {
		Output *Result `json:"output"`
	}
	if len(row.Metadata) > 0 {
		if err := json.Unmarshal(row.Metadata, &md); err != nil {
			return nil, fmt.Errorf("job %d: metadata: %w", row.ID, err)
		}
	}
	j.Result = md.Output
	j.AttemptedBy = row.AttemptedBy
	if row.AttemptedAt != nil {
		j.attemptedAt = *row.AttemptedAt
	}
	for _, e := range row.Errors {
		j.Errors = append(j.Errors, e.Error)
	}
	return j, nil
}

// Submit checks a ([Queue.Check]: a refusal wraps [ErrRefused]) and puts
// it in the queue. With an idempotency key already used for a.Ref it
// returns that job, marked Duplicate.
//
// A run with an idempotency key is bound in the queue's key store (see
// [KeyStore]): a key already bound returns its job, marked Duplicate, with
// AlreadyRan naming the run; the same key with other inputs is refused
// (*[KeyConflictError]).
func (q *Queue) Submit(ctx context.Context, a RunArgs) (*Job, error) {
	check, capID, err := q.checker(ctx, a.Ref)
	if err != nil {
		return nil, err
	}
	if err := check(a); err != nil {
		return nil, err
	}
	a.KeyGeneration = 0 // the key store's to set, never a caller's
	if a.IdempotencyKey != "" && q.keys != nil {
		return q.submitKeyed(ctx, capID, a)
	}
	return q.insert(ctx, a)
}

// insert puts a checked run in the queue.
func (q *Queue) insert(ctx context.Context, a RunArgs) (*Job, error) {
	o := a.InsertOpts() // River takes metadata only from the options passed
	res, err := q.c.Insert(ctx, a, &o)
	if err != nil {
		return nil, fmt.Errorf("submit %s: %w", a.Ref, err)
	}
	j, err := jobOf(res.Job)
	if err != nil {
		return nil, err
	}
	j.Duplicate = res.UniqueSkippedAsDuplicate
	return j, nil
}

// Get returns one job, or [ErrNotFound].
func (q *Queue) Get(ctx context.Context, id int64) (*Job, error) {
	row, err := q.c.JobGet(ctx, id)
	if errors.Is(err, river.ErrNotFound) {
		return nil, fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job %d: %w", id, err)
	}
	return jobOf(row)
}

// ListParams narrows List.
type ListParams struct {
	// State keeps jobs in one River state (available, running, completed,
	// cancelled, retryable, discarded, scheduled); empty keeps all.
	State string
	// IDs keeps only these jobs.
	IDs []int64
	// Limit caps the result (default 100, at most 10000).
	Limit int
}

// Validate checks p; errors name the field.
func (p ListParams) Validate() error {
	if p.Limit < 0 || p.Limit > 10000 {
		return fmt.Errorf("limit: want 0 to 10000, got %d", p.Limit)
	}
	if p.State != "" && !validState(p.State) {
		return fmt.Errorf("state: unknown state %q", p.State)
	}
	return nil
}

func validState(s string) bool {
	for _, st := range rivertype.JobStates() {
		if string(st) == s {
			return true
		}
	}
	return false
}

// List returns runs, newest first.
func (q *Queue) List(ctx context.Context, p ListParams) ([]*Job, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	lp := river.NewJobListParams().Kinds(Kind).First(limit).OrderBy(river.JobListOrderByID, river.SortOrderDesc)
	if p.State != "" {
		lp = lp.States(rivertype.JobState(p.State))
	} else {
		lp = lp.States(rivertype.JobStates()...)
	}
	if len(p.IDs) > 0 {
		lp = lp.IDs(p.IDs...)
	}
	res, err := q.c.JobList(ctx, lp)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := make([]*Job, 0, len(res.Jobs))
	for _, row := range res.Jobs {
		j, err := jobOf(row)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// Cancel cancels a job that has not finished: a queued one never runs, a
// running one has its context cancelled. A finished job is returned as it
// is. [ErrNotFound] when absent.
func (q *Queue) Cancel(ctx context.Context, id int64) (*Job, error) {
	row, err := q.c.JobCancel(ctx, id)
	if errors.Is(err, river.ErrNotFound) || errors.Is(err, rivertype.ErrNotFound) {
		return nil, fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("cancel job %d: %w", id, err)
	}
	return jobOf(row)
}

// Wait polls the job every interval until it is final or ctx ends.
func (q *Queue) Wait(ctx context.Context, id int64, interval time.Duration) (*Job, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		j, err := q.Get(ctx, id)
		if err != nil || j.Final() {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-t.C:
		}
	}
}
