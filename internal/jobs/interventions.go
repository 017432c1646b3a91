package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// Intervention is a run handed to a person, as `cua interventions` and
// the jobs API show it: what was running, where it stopped, what it may
// have sent, its inputs (a sensitive one only as its secret reference) and
// why; once resolved, who said what and when.
type Intervention struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	RunID  string `json:"run_id"`
	// JobID is the queue's job of the run; 0 for a run not from the queue.
	JobID      int64  `json:"job_id,omitempty"`
	Capability string `json:"capability,omitempty"`
	Step       string `json:"step,omitempty"`
	// RunStatus is the run's status in the run index (ABANDONED for an
	// attempt whose process died).
	RunStatus   domain.RunStatus   `json:"run_status,omitempty"`
	FailureCode domain.FailureCode `json:"failure_code,omitempty"`
	Effects     *domain.Effects    `json:"effects,omitempty"`
	// Inputs are the job's inputs; a sensitive input shows as
	// "$secret:REF", never a value.
	Inputs         map[string]string `json:"inputs,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	Why            string            `json:"why"`
	CreatedAt      time.Time         `json:"created_at"`
	ClaimedBy      string            `json:"claimed_by,omitempty"`
	ResolvedAt     time.Time         `json:"resolved_at,omitzero"`
	ResolvedBy     string            `json:"resolved_by,omitempty"`
	Verdict        store.Verdict     `json:"verdict,omitempty"`
	Note           string            `json:"note,omitempty"`
}

var runIDRE = regexp.MustCompile(`^j([0-9]+)-a[0-9]+$`)

// JobOfRun returns the job id of a queued run's id (RunID's j<job>-a<n>),
// or 0 when the run did not come from the queue.
func JobOfRun(runID string) int64 {
	m := runIDRE.FindStringSubmatch(runID)
	if m == nil {
		return 0
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// ErrNoKeyStore is returned by the intervention calls of a queue opened
// without [Config.Keys].
var ErrNoKeyStore = errors.New("the queue was opened without its store")

// Interventions lists the interventions in status ("" for all; open,
// claimed or resolved), oldest first.
func (q *Queue) Interventions(ctx context.Context, status string) ([]*Intervention, error) {
	if q.keys == nil {
		return nil, ErrNoKeyStore
	}
	switch store.InterventionStatus(status) {
	case "", store.InterventionOpen, store.InterventionClaimed, store.InterventionResolved:
	default:
		return nil, refused(fmt.Errorf("status: want open, claimed or resolved, got %q", status))
	}
	ivs, err := q.keys.ListInterventions(ctx, store.InterventionFilter{Status: store.InterventionStatus(status)})
	if err != nil {
		return nil, fmt.Errorf("list interventions: %w", err)
	}
	out := make([]*Intervention, 0, len(ivs))
	for _, in := range ivs {
		v, err := q.view(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Intervention returns one intervention; [ErrNotFound] when absent.
func (q *Queue) Intervention(ctx context.Context, id string) (*Intervention, error) {
	in, err := q.intervention(ctx, id)
	if err != nil {
		return nil, err
	}
	return q.view(ctx, in)
}

func (q *Queue) intervention(ctx context.Context, id string) (store.Intervention, error) {
	if q.keys == nil {
		return store.Intervention{}, ErrNoKeyStore
	}
	if strings.TrimSpace(id) == "" {
		return store.Intervention{}, refused(errors.New("id: an intervention id is required"))
	}
	ivs, err := q.keys.ListInterventions(ctx, store.InterventionFilter{})
	if err != nil {
		return store.Intervention{}, fmt.Errorf("intervention %s: %w", id, err)
	}
	for _, in := range ivs {
		if in.ID == id {
			return in, nil
		}
	}
	return store.Intervention{}, &store.NotFoundError{What: "intervention " + id, Reason: "no such intervention", Fix: "cua interventions list", Kind: ErrNotFound}
}

// view joins an intervention with its run and job.
func (q *Queue) view(ctx context.Context, in store.Intervention) (*Intervention, error) {
	v := &Intervention{ID: in.ID, Status: string(in.Status), RunID: in.RunID, JobID: JobOfRun(in.RunID),
		Capability: in.Capability, Step: in.Step, FailureCode: in.FailureCode, Why: in.Reason, CreatedAt: in.CreatedAt,
		ClaimedBy: in.ClaimedBy, ResolvedAt: in.ResolvedAt, ResolvedBy: in.ResolvedBy, Verdict: in.Verdict, Note: in.Note}
	if len(in.Effects) > 0 {
		v.Effects = &domain.Effects{}
		if err := json.Unmarshal(in.Effects, v.Effects); err != nil {
			return nil, fmt.Errorf("intervention %s: effects: %w", in.ID, err)
		}
	}
	if in.Status == store.InterventionResolved && in.Verdict == "" {
		v.Note = in.Resolution // resolved in the console before verdicts
	}
	if in.RunID != "" {
		r, err := q.keys.GetRun(ctx, in.RunID)
		switch {
		case err == nil:
			v.RunStatus = r.Status
			if v.Capability == "" {
				v.Capability = r.CapabilityID + "@" + r.Version
			}
			if v.FailureCode == "" {
				v.FailureCode = r.FailureCode
			}
			if v.Effects == nil && len(r.Effects) > 0 {
				v.Effects = &domain.Effects{}
				if err := json.Unmarshal(r.Effects, v.Effects); err != nil {
					return nil, fmt.Errorf("intervention %s: run effects: %w", in.ID, err)
				}
			}
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("intervention %s: run %s: %w", in.ID, in.RunID, err)
		}
	}
	if v.Step == "" && v.Effects != nil && len(v.Effects.Steps) > 0 {
		v.Step = v.Effects.Steps[len(v.Effects.Steps)-1].Step
	}
	if v.JobID != 0 {
		j, err := q.Get(ctx, v.JobID)
		switch {
		case err == nil:
			v.Inputs = maps.Clone(j.Args.Inputs)
			for _, name := range slices.Sorted(maps.Keys(j.Args.InputSecrets)) {
				if v.Inputs == nil {
					v.Inputs = map[string]string{}
				}
				v.Inputs[name] = SecretPrefix + j.Args.InputSecrets[name]
			}
			v.IdempotencyKey = j.Args.IdempotencyKey
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return v, nil
}

// Resolution is a person's answer to an intervention.
type Resolution struct {
	Verdict store.Verdict `json:"verdict"`
	// By is the principal resolving it, set by the caller from who signed
	// in (never from the request body).
	By   string `json:"-"`
	Note string `json:"note,omitempty"`
}

// Validate checks r before anything is written; errors name the field.
func (r Resolution) Validate() error {
	switch {
	case r.Verdict != store.VerdictLanded && r.Verdict != store.VerdictNotLanded:
		return fmt.Errorf("verdict: want landed or not_landed, got %q", r.Verdict)
	case strings.TrimSpace(r.By) == "":
		return errors.New("by: the resolving principal is required")
	case len(r.Note) > 2000:
		return errors.New("note: at most 2000 characters")
	case strings.ContainsFunc(r.Note, func(c rune) bool { return c < 0x20 && c != '\n' || c == 0x7f }):
		return errors.New("note: control characters are not allowed")
	}
	return nil
}

// ResolveIntervention records a person's verdict on an intervention:
// landed (the effect happened: the key stays bound to that run, which
// every later submit of it returns) or not_landed (it did not: exactly one
// new job may take the run's idempotency key). Who, when and why are
// recorded with it, in one transaction with the key's release.
func (q *Queue) ResolveIntervention(ctx context.Context, id string, r Resolution) (*Intervention, error) {
	if err := r.Validate(); err != nil {
		return nil, refused(err)
	}
	in, err := q.intervention(ctx, id)
	if err != nil {
		return nil, err
	}
	if in.Status == store.InterventionResolved {
		return nil, refused(fmt.Errorf("id: intervention %s was resolved at %s by %s (%s)", id,
			in.ResolvedAt.UTC().Format(time.RFC3339), or(in.ResolvedBy, "the console"), in.Resolution))
	}
	s := store.Settlement{ID: id, Verdict: r.Verdict, By: r.By, Note: r.Note}
	if jobID := JobOfRun(in.RunID); r.Verdict == store.VerdictNotLanded && jobID != 0 {
		j, err := q.Get(ctx, jobID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		if j != nil && j.Args.IdempotencyKey != "" {
			r, err := q.keys.GetRun(ctx, in.RunID)
			if err != nil {
				return nil, fmt.Errorf("intervention %s: run %s: %w", id, in.RunID, err)
			}
			s.Release, s.ReleaseJobID = &store.JobKey{CapabilityID: r.CapabilityID, Key: j.Args.IdempotencyKey}, jobID
		}
	}
	out, err := q.keys.SettleIntervention(ctx, s)
	if errors.Is(err, store.ErrAlreadyResolved) {
		return nil, refused(fmt.Errorf("id: %w", err))
	}
	if err != nil {
		return nil, err
	}
	return q.view(ctx, out)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
