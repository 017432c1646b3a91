package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/store"
)

// Runner runs one replay and returns its record (pipeline.Replay with a
// session opener, wired by the composition root). The error is non-nil
// only when the run could not be made; every outcome is in the record.
// It must be safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, r Request) (*domain.RunRecord, error)
}

// Request is one replay a Runner makes.
type Request struct {
	RunID      string
	Capability *capability.Loaded
	// Library serves the capabilities it calls (the catalog).
	Library replay.Library
	// Gate admits and indexes the run in the catalog.
	Gate *catalog.Gate
	// Inputs are the run's input values, the sensitive ones resolved from
	// their secret references: they live in this process only.
	Inputs        map[string]string
	BaseURL       string
	ReleasedGates []string
	// Evidence is the job's evidence level override (RunArgs.Evidence).
	Evidence domain.EvidenceLevel
	// Ref and ContentHash are the capability as the job named it (its
	// reference and pin): what a refusal names when Capability is nil
	// because the reference did not resolve.
	Ref, ContentHash string
}

// Refuser is a Runner that also records a run refused before it began
// (runner.Runner): a small signed evidence bundle (run_started, the
// refusal naming check, the record) and the run's index row through
// r.Gate, so a job the worker refuses is a run like any other. Its
// record ends the job.
type Refuser interface {
	Refuse(ctx context.Context, r Request, check string, why error) (*domain.RunRecord, error)
}

// interventions is where runs a human must look at go, and where a dead
// attempt's run is marked ABANDONED.
type interventions interface {
	EnqueueIntervention(ctx context.Context, in store.Intervention) (store.Intervention, error)
	UpdateRun(ctx context.Context, r store.Run) (store.Run, error)
}

// Worker works [RunArgs] jobs: it resolves the capability in the catalog,
// checks its pinned hash, refuses to retry an attempt after an effect, and
// runs it through its Runner. Safe for concurrent use.
type Worker struct {
	river.WorkerDefaults[RunArgs]
	cat     *catalog.Catalog
	queue   interventions
	secrets SecretSource
	run     Runner
	logger  *slog.Logger
	active  Active // Config.Active, set by Open
}

// NewWorker returns a worker over the catalog; interventions go to st,
// and the secret references of sensitive inputs ([RunArgs.InputSecrets])
// are resolved from sec (nil: a job with one ends SECRET_UNAVAILABLE).
func NewWorker(cat *catalog.Catalog, st interventions, sec SecretSource, run Runner, logger *slog.Logger) *Worker {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Worker{cat: cat, queue: st, secrets: sec, run: run, logger: logger}
}

// Result is what a finished job holds (River's recorded output).
type Result struct {
	RunID       string             `json:"run_id"`
	Status      domain.RunStatus   `json:"status"`
	Outcome     string             `json:"outcome,omitempty"`
	FailureCode domain.FailureCode `json:"failure_code,omitempty"`
	Message     string             `json:"message,omitempty"`
	Outputs     map[string]any     `json:"outputs,omitempty"`
	Effects     *domain.Effects    `json:"effects,omitempty"`
	// NeedsHuman marks a run handed to a person: NEEDS_HUMAN, an effect
	// sent and not confirmed, or an attempt that died after (or maybe
	// after) an effect. Intervention names its queue entry.
	NeedsHuman   bool   `json:"needs_human,omitempty"`
	Intervention string `json:"intervention,omitempty"`
	DurationMS   int64  `json:"duration_ms"`
	Attempt      int    `json:"attempt"`
}

// Work implements river.Worker.
func (w *Worker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	a := job.Args
	// ID@active is resolved for each attempt: a version reverted while
	// the job waited is not run.
	ref, active, err := resolveActive(ctx, w.active, a.Ref)
	if err != nil {
		return err
	}
	l, _, err := w.cat.Resolve(ctx, ref)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return w.refuse(ctx, job, nil, evidence.CheckCapability, domain.CodeCapabilityInvalid, err)
		}
		if domain.ErrorCode(err) != domain.CodeInternal {
			return w.refuse(ctx, job, nil, evidence.CheckCapability, domain.ErrorCode(err), err)
		}
		return fmt.Errorf("resolve %s: %w", a.Ref, err)
	}
	if a.ContentHash != "" && l.Hash != a.ContentHash {
		return w.refuse(ctx, job, l, evidence.CheckContentHash, domain.CodeHashMismatch,
			fmt.Errorf("%s resolves to %s, the job was pinned to %s", a.Ref, l.Hash, a.ContentHash))
	}
	if err := CheckInputs(l.Capability, a); err != nil {
		return w.refuse(ctx, job, l, evidence.CheckInputs, domain.CodeInputInvalid, err)
	}
	for k := 1; k < job.Attempt; k++ {
		if stop, err := w.prior(ctx, job, l, RunID(job.ID, k)); stop || err != nil {
			return err
		}
	}
	// Secret references are resolved last, just before the run; a missing
	// secret will not appear by retrying, so the job ends here.
	inputs, err := resolveInputs(w.secrets, a)
	if err != nil {
		return w.refuse(ctx, job, l, evidence.CheckSecrets, domain.CodeSecretUnavailable, err)
	}
	runID := RunID(job.ID, job.Attempt)
	rec, err := w.run.Run(ctx, Request{RunID: runID, Capability: l, Library: w.cat.Library(ctx),
		Gate: w.cat.Gate(catalog.RunParams{Unattended: a.Unattended}), Inputs: inputs, BaseURL: a.BaseURL,
		ReleasedGates: a.ReleaseGates, Evidence: a.Evidence})
	if err != nil {
		// The run could not be made; if it was indexed, it may have begun.
		stop, perr := w.prior(ctx, job, l, runID)
		if stop {
			w.logger.WarnContext(ctx, "run returned an error after it was indexed", slog.String("run_id", runID), slog.Any("error", err))
			return perr // nil: the run had ended and is the job's result; else the job is cancelled
		}
		if perr != nil {
			return errors.Join(err, perr)
		}
		return fmt.Errorf("run %s: %w", runID, err)
	}
	if ctx.Err() != nil && (rec.Effects == nil || !rec.Effects.Sent) {
		// The attempt timed out or was cancelled having sent nothing: not
		// a result; River retries it (or it stays cancelled).
		return fmt.Errorf("run %s: %s: %w", runID, rec.FailureCode, ctx.Err())
	}
	res := resultOf(rec, job.Attempt)
	if res.NeedsHuman {
		res.Intervention, err = w.escalate(ctx, runID, reasonOf(rec))
		if err != nil {
			return err
		}
	}
	if active {
		w.observe(ctx, rec)
	}
	jobLog(ctx).Info("run ended", slog.String("run_id", runID), slog.String("capability", l.Capability.Ref()),
		slog.String("status", string(rec.Status)), slog.String("failure_code", string(rec.FailureCode)))
	w.logger.InfoContext(ctx, "run finished", slog.Int64("job", job.ID), slog.String("run_id", runID),
		slog.String("status", string(rec.Status)), slog.Bool("needs_human", res.NeedsHuman))
	return river.RecordOutput(ctx, res)
}

// observe tells heal of a finished run of ID@active (a canary pass, a
// promotion or a revert) and logs what it did. The run has ended, so an
// error is logged, never the job's.
func (w *Worker) observe(ctx context.Context, rec *domain.RunRecord) {
	msg, err := w.active.Observe(ctx, rec)
	if msg != "" {
		w.logger.InfoContext(ctx, "heal: "+msg, slog.String("run_id", rec.RunID))
	}
	if err != nil {
		w.logger.WarnContext(ctx, "heal: the canary did not hear the run", slog.String("run_id", rec.RunID), slog.Any("error", err))
	}
}

// prior checks an earlier attempt's run; stop is true when the job ends
// here, its result recorded:
//   - the attempt's run ended with a result the worker keeps (anything but
//     a cancellation or time-out that sent nothing): its process died
//     after the run and before River recorded the job complete. That run
//     is the job's result; the job never runs again.
//   - the attempt died before its run ended: the run is marked ABANDONED
//     in the index with the effects known so far; if it sent an effect,
//     or may have (a capability with an elevated or irreversible step),
//     the job is cancelled and handed to a person (an intervention).
func (w *Worker) prior(ctx context.Context, job *river.Job[RunArgs], l *capability.Loaded, runID string) (stop bool, err error) {
	r, err := w.cat.Run(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil // it ended before the catalog indexed it: nothing was sent
	}
	if err != nil {
		return false, fmt.Errorf("earlier attempt %s: %w", runID, err)
	}
	rec, err := catalog.Record(r)
	if err != nil {
		return false, err
	}
	if !r.EndedAt.IsZero() && r.Status != domain.StatusAbandoned && kept(rec) {
		res := resultOf(rec, job.Attempt)
		if res.NeedsHuman {
			if res.Intervention, err = w.escalate(ctx, runID, reasonOf(rec)); err != nil {
				return false, err
			}
		}
		jobLog(ctx).Info("an earlier attempt's run had ended: it is the job's result, nothing runs again",
			slog.String("run_id", runID), slog.String("status", string(rec.Status)))
		w.logger.InfoContext(ctx, "earlier attempt had finished", slog.Int64("job", job.ID), slog.String("run_id", runID),
			slog.String("status", string(rec.Status)))
		return true, river.RecordOutput(ctx, res)
	}
	if r.EndedAt.IsZero() {
		if err := w.abandon(ctx, r); err != nil {
			return false, err
		}
	}
	var why string
	switch {
	case rec.Effects != nil && rec.Effects.Sent:
		why = fmt.Sprintf("attempt run %s sent an effect (%s); a queue never retries it", runID, effectList(rec.Effects))
	case (r.EndedAt.IsZero() || r.Status == domain.StatusAbandoned) && MaxRisk(l).Rank() >= domain.RiskElevated.Rank():
		why = fmt.Sprintf("attempt run %s of %s (%s) died before it ended: whether its effect was sent is unknown; check the application", runID, l.Capability.Ref(), MaxRisk(l))
	default:
		return false, nil
	}
	res := Result{RunID: runID, Status: domain.StatusNeedsHuman, FailureCode: domain.CodeEffectUnknown, Message: why,
		Effects: rec.Effects, NeedsHuman: true, Attempt: job.Attempt}
	if res.Intervention, err = w.escalate(ctx, runID, why); err != nil {
		return false, err
	}
	w.logger.WarnContext(ctx, "run needs a human", slog.Int64("job", job.ID), slog.String("run_id", runID), slog.String("reason", why))
	if err := river.RecordOutput(ctx, res); err != nil {
		return false, err
	}
	return true, river.JobCancel(domain.Errorf(domain.CodeEffectUnknown, "%s", why))
}

// kept reports whether an ended run's result is one the worker records as
// the job's (rather than returning it to River to retry): everything but
// a cancellation, time-out or lost surface that sent nothing.
func kept(rec *domain.RunRecord) bool {
	if rec.Effects != nil && rec.Effects.Sent {
		return true
	}
	switch rec.FailureCode {
	case domain.CodeCanceled, domain.CodeTimeout, domain.CodeSurfaceCrashed, domain.CodeInternal:
		return false
	}
	return rec.Status != domain.StatusRunning
}

// abandon marks a run whose process died ABANDONED in the run index,
// keeping the effects it had recorded.
func (w *Worker) abandon(ctx context.Context, r store.Run) error {
	r.Status, r.EndedAt = domain.StatusAbandoned, time.Now()
	if r.FailureCode == "" {
		r.FailureCode = domain.CodeSurfaceCrashed
	}
	if _, err := w.queue.UpdateRun(ctx, r); err != nil {
		return fmt.Errorf("mark run %s abandoned: %w", r.ID, err)
	}
	w.logger.WarnContext(ctx, "earlier attempt died before its run ended", slog.String("run_id", r.ID))
	return nil
}

// escalate enqueues an intervention for runID; its id is derived from the
// run, so a repeat after a crash finds it instead of adding another.
func (w *Worker) escalate(ctx context.Context, runID, reason string) (string, error) {
	id := "iv-" + runID
	_, err := w.queue.EnqueueIntervention(ctx, store.Intervention{ID: id, SessionID: runID, RunID: runID, Reason: reason})
	if err != nil && !errors.Is(err, store.ErrExists) {
		return "", fmt.Errorf("enqueue intervention for %s: %w", runID, err)
	}
	// River UI shows this line as the attempt's log; the job's output
	// names the intervention too (Result.Intervention).
	jobLog(ctx).Warn("needs a person: "+id, slog.String("run_id", runID), slog.String("why", reason))
	return id, nil
}

// unresolved is the content hash a refused run's index row names when its
// capability did not resolve and the job pinned no hash.
const unresolved = "unresolved"

// refuse records a job that can never run (unknown capability, a pinned
// hash that does not match, inputs the capability refuses, a secret the
// worker's store does not hold) and cancels it: River never retries it.
// With a Runner that is a Refuser, the refusal is a run of its own: a
// signed bundle and an index row (l is nil when the capability did not
// resolve).
func (w *Worker) refuse(ctx context.Context, job *river.Job[RunArgs], l *capability.Loaded, check string, code domain.FailureCode, err error) error {
	res := Result{Status: domain.StatusFailed, FailureCode: code, Message: err.Error(), Attempt: job.Attempt}
	if rf, ok := w.run.(Refuser); ok {
		a := job.Args
		// A secret the worker could not resolve is not an input the run
		// was given: only the plain inputs are recorded.
		req := Request{RunID: RunID(job.ID, job.Attempt), Capability: l, Inputs: a.Inputs, BaseURL: a.BaseURL,
			Ref: a.Ref, ContentHash: a.ContentHash, Gate: w.cat.Gate(catalog.RunParams{Unattended: a.Unattended})}
		if req.ContentHash == "" {
			req.ContentHash = unresolved
		}
		rec, rerr := rf.Refuse(ctx, req, check, &domain.Error{Code: code, Message: err.Error(), Err: err})
		if rerr != nil {
			return fmt.Errorf("record refused run %s: %w", req.RunID, rerr)
		}
		res.RunID, res.Message = rec.RunID, rec.Message
	}
	if rerr := river.RecordOutput(ctx, res); rerr != nil {
		return rerr
	}
	return river.JobCancel(err)
}

func resultOf(rec *domain.RunRecord, attempt int) Result {
	r := Result{RunID: rec.RunID, Status: rec.Status, Outcome: rec.Outcome, FailureCode: rec.FailureCode,
		Message: rec.Message, Outputs: rec.Outputs, Effects: rec.Effects, DurationMS: rec.DurationMS, Attempt: attempt}
	r.NeedsHuman = rec.Status == domain.StatusNeedsHuman || (rec.Effects != nil && rec.Effects.Unconfirmed)
	return r
}

func reasonOf(rec *domain.RunRecord) string {
	if rec.Message != "" {
		return rec.Message
	}
	return fmt.Sprintf("run %s ended %s %s", rec.RunID, rec.Status, rec.FailureCode)
}

func effectList(e *domain.Effects) string {
	b, _ := json.Marshal(e.Steps)
	return string(b)
}

// MaxRisk is the highest risk a run of l can reach: the capability's own
// tier and every step's.
func MaxRisk(l *capability.Loaded) domain.Risk {
	c := l.Capability
	r := domain.MaxRisk(c.Risk, domain.RiskSafe)
	for _, st := range c.Steps {
		r = domain.MaxRisk(r, st.Risk)
	}
	return r
}

// Class is how a result counts in a batch: "done" (SUCCESS or
// BUSINESS_OUTCOME), "needs_human" or "failed".
func (r *Result) Class() string {
	return RowResult{Status: r.Status, NeedsHuman: r.NeedsHuman}.Class()
}
