package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/jobs"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/runtime"
)

// checkOrigin admits req's base URL only when its origin is a full origin
// the sealed capability (or its tenant overlay, sealed as a capability of
// its own) declares in policy.allowed_domains, or one the worker allows
// (Config.AllowOrigins). Whoever queued the run chose its base URL; the
// worker holds the secrets a run types (a prerequisite's sign-on), so the
// worker decides where they may go (DESIGN invariant 17). A bare host in
// allowed_domains takes the entry origin, so it admits none here.
func (r *Runner) checkOrigin(req jobs.Request) error {
	c := req.Capability.Capability
	origin, ok, err := policy.OriginAllowed(req.BaseURL, c.Policy.AllowedDomains, r.cfg.AllowOrigins)
	if err != nil {
		return domain.Errorf(domain.CodeDomainNotAllowed, "base_url %q: %v; the run was refused before anything opened", req.BaseURL, err)
	}
	if ok {
		return nil
	}
	return domain.Errorf(domain.CodeDomainNotAllowed,
		"base_url origin %s is not allowed on this worker: %s declares no such origin in policy.allowed_domains and the worker "+
			"was not started with --allow-origin %s. A job's base_url only picks among the origins the capability (or its "+
			"tenant overlay) declares and the worker allows; the worker's operator allows this one with --allow-origin %s. "+
			"Nothing was opened or sent", origin, c.Ref(), origin, origin)
}

// refuse records a run refused before it began: its evidence (the refusal
// and the record) and its index entry, with no session opened. The record
// ends the job FAILED; the queue does not retry a run that has a record.
func (r *Runner) refuse(ctx context.Context, req jobs.Request, why error) (*domain.RunRecord, error) {
	red := redact.New()
	rt, err := runtime.NewRun(runtime.RunConfig{Base: runtime.Base{Logger: r.cfg.Logger(red)}, ID: req.RunID,
		BaseURL: req.BaseURL, Redactor: red, DataDir: r.cfg.DataDir})
	if err != nil {
		return nil, err
	}
	msg := why.Error()
	var de *domain.Error
	if errors.As(why, &de) && de.Message != "" {
		msg = de.Message
	}
	code, at := domain.ErrorCode(why), rt.Now().UTC().Format(time.RFC3339Nano)
	l := req.Capability
	rec := evidence.RedactRecord(&domain.RunRecord{SchemaVersion: 1, RunID: req.RunID, Capability: l.Capability.Ref(),
		ContentHash: l.Hash, Status: domain.StatusFailed, ExitCode: domain.StatusFailed.ExitCode(), FailureCode: code,
		Message: msg, StartedAt: at, FinishedAt: at, Steps: []domain.StepResult{}, BaseURL: req.BaseURL}, red)
	rt.Emit("", evidence.RunRefused{Code: code, Reason: rec.Message})
	rt.Emit("", evidence.RunFinished{Status: rec.Status, FailureCode: code})
	var dir string
	if rt.Evidence != nil {
		dir = rt.Evidence.Dir()
		if err = rt.Evidence.WriteRecord(rec); err == nil {
			err = rt.Evidence.Sync()
		}
	}
	if cerr := rt.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", req.RunID, err)
	}
	r.cfg.Logger(red).WarnContext(ctx, "run refused", "run_id", req.RunID, "code", string(code), "reason", rec.Message)
	if req.Gate != nil {
		if err := req.Gate.Unstarted(ctx, l, rec, dir); err != nil {
			return nil, err
		}
	}
	return rec, nil
}
