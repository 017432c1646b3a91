package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// An idempotency key binds for ever (DESIGN invariant 16). A queued run's
// key is bound, per capability id, to the first job that used it and to a
// digest of that job's inputs, secret references and base URL, in the
// store beside the run index, whatever then becomes of the job
// (completed, cancelled, discarded, rescued, in the intervention queue).
// Submitting the key again:
//   - with other inputs is refused, naming the key and the inputs that
//     differ (never their values);
//   - while the bound job waits or runs returns that job;
//   - once the bound job ran returns it, with its first run (AlreadyRan):
//     "already ran as run R at T";
//   - once a person resolved the bound run's intervention as not landed
//     (ResolveIntervention) queues exactly one new job under the key;
//   - once the bound job ended without any attempt reaching the run index
//     (cancelled while queued, refused by a worker) queues a new job:
//     nothing ran.
//
// River's own uniqueness (Ref, IdempotencyKey, KeyGeneration) still merges
// concurrent submits of one generation into one job.

// KeyStore is where keys are bound (a store.Store).
type KeyStore interface {
	ClaimJobKey(ctx context.Context, k store.JobKey) (store.JobKey, bool, error)
	GetJobKey(ctx context.Context, capabilityID, key string) (store.JobKey, error)
	RebindJobKey(ctx context.Context, k store.JobKey) (store.JobKey, error)
	SetJobKeyJob(ctx context.Context, capabilityID, key string, generation, jobID int64) error
	SettleIntervention(ctx context.Context, s store.Settlement) (store.Intervention, error)
	ListInterventions(ctx context.Context, f store.InterventionFilter) ([]store.Intervention, error)
	GetRun(ctx context.Context, id string) (store.Run, error)
}

// AlreadyRan says that a submit found its key's run instead of queueing.
type AlreadyRan struct {
	JobID  int64            `json:"job_id"`
	RunID  string           `json:"run_id,omitempty"`
	At     time.Time        `json:"at,omitzero"`
	State  string           `json:"state"`
	Status domain.RunStatus `json:"status,omitempty"`
}

// String is the sentence every client prints.
func (a *AlreadyRan) String() string {
	if a.RunID == "" {
		return fmt.Sprintf("already submitted as job %d (%s)", a.JobID, a.State)
	}
	return fmt.Sprintf("already ran as run %s at %s (job %d, %s)", a.RunID, a.At.UTC().Format(time.RFC3339), a.JobID, a.State)
}

// digest is a run's inputs digest: per field ("base_url", "inputs.NAME",
// "input_secrets.NAME") a salted hash of its value, so two runs can be
// compared field by field without the store holding a value.
func digest(capID string, a RunArgs) map[string]string {
	d := map[string]string{"base_url": hashField(capID, a.IdempotencyKey, "base_url", strings.TrimRight(a.BaseURL, "/"))}
	for k, v := range a.Inputs {
		d["inputs."+k] = hashField(capID, a.IdempotencyKey, "inputs."+k, v)
	}
	for k, v := range a.InputSecrets {
		d["input_secrets."+k] = hashField(capID, a.IdempotencyKey, "input_secrets."+k, v)
	}
	return d
}

func hashField(capID, key, field, value string) string {
	h := sha256.Sum256([]byte(capID + "\x00" + key + "\x00" + field + "\x00" + value))
	return hex.EncodeToString(h[:12])
}

func encodeDigest(d map[string]string) string {
	b, _ := json.Marshal(d) // map keys are sorted
	return string(b)
}

// differing names the fields of two digests that differ, sorted.
func differing(stored string, now map[string]string) []string {
	var old map[string]string
	if err := json.Unmarshal([]byte(stored), &old); err != nil {
		return []string{"(unreadable stored digest)"}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if old[k] != now[k] {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, ok := now[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// KeyConflictError refuses a key already bound to other inputs. It wraps
// ErrRefused.
type KeyConflictError struct {
	Key    string
	JobID  int64
	Fields []string
}

func (e *KeyConflictError) Error() string {
	return fmt.Sprintf("idempotency_key: %q is bound to job %d with other inputs (%s differ): a key names one operation for ever; use a new key for another",
		e.Key, e.JobID, strings.Join(e.Fields, ", "))
}

// Is matches ErrRefused.
func (e *KeyConflictError) Is(target error) bool { return target == ErrRefused }

// submitKeyed binds a's key and queues a, or returns the job the key is
// bound to. capID is the capability id the key belongs to.
func (q *Queue) submitKeyed(ctx context.Context, capID string, a RunArgs) (*Job, error) {
	d := digest(capID, a)
	enc := encodeDigest(d)
	for range 3 {
		k, created, err := q.keys.ClaimJobKey(ctx, store.JobKey{CapabilityID: capID, Key: a.IdempotencyKey, InputsDigest: enc})
		if err != nil {
			return nil, fmt.Errorf("idempotency key %q: %w", a.IdempotencyKey, err)
		}
		if !created && k.InputsDigest != enc {
			return nil, &KeyConflictError{Key: a.IdempotencyKey, JobID: k.JobID, Fields: differing(k.InputsDigest, d)}
		}
		if !created && k.JobID != 0 && k.ReleasedAt.IsZero() {
			j, free, err := q.boundJob(ctx, k)
			if err != nil || !free {
				return j, err
			}
		}
		if !created && (k.JobID != 0 || !k.ReleasedAt.IsZero()) {
			// Released by a person, or bound to a job that never ran:
			// one new job takes the key at the next generation.
			if k, err = q.keys.RebindJobKey(ctx, store.JobKey{CapabilityID: capID, Key: a.IdempotencyKey,
				InputsDigest: enc, Generation: k.Generation}); errors.Is(err, store.ErrKeyMoved) {
				continue // another submitter moved it first: read it again
			} else if err != nil {
				return nil, fmt.Errorf("idempotency key %q: %w", a.IdempotencyKey, err)
			}
		}
		a.KeyGeneration = k.Generation
		j, err := q.insert(ctx, a)
		if err != nil {
			return nil, err
		}
		if err := q.keys.SetJobKeyJob(ctx, capID, a.IdempotencyKey, k.Generation, j.ID); err != nil {
			return nil, fmt.Errorf("idempotency key %q: bind job %d: %w", a.IdempotencyKey, j.ID, err)
		}
		return j, nil
	}
	return nil, fmt.Errorf("idempotency key %q: moved by other submitters three times; submit again", a.IdempotencyKey)
}

// boundJob returns the job a key is bound to, marked Duplicate with what
// it ran, or free=true when that job ended without any attempt reaching
// the run index (nothing ran: a new job may take the key).
func (q *Queue) boundJob(ctx context.Context, k store.JobKey) (*Job, bool, error) {
	j, err := q.Get(ctx, k.JobID)
	if errors.Is(err, ErrNotFound) {
		return nil, false, refused(fmt.Errorf("idempotency_key: %q is bound to job %d, which the queue no longer holds; use a new key", k.Key, k.JobID))
	}
	if err != nil {
		return nil, false, err
	}
	run, err := q.firstRun(ctx, j)
	if err != nil {
		return nil, false, err
	}
	if run == nil && j.Final() {
		return nil, true, nil
	}
	j.Duplicate = true
	j.AlreadyRan = &AlreadyRan{JobID: j.ID, State: j.State}
	if run != nil {
		j.AlreadyRan.RunID, j.AlreadyRan.At, j.AlreadyRan.Status = run.ID, run.StartedAt, run.Status
	}
	return j, false, nil
}

// firstRun returns the latest attempt of j the run index holds, or nil
// when none of its attempts reached it.
func (q *Queue) firstRun(ctx context.Context, j *Job) (*store.Run, error) {
	for n := max(j.Attempt, 1); n >= 1; n-- {
		r, err := q.keys.GetRun(ctx, RunID(j.ID, n))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", j.ID, err)
		}
		return &r, nil
	}
	return nil, nil
}
