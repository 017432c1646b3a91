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

// Refuse records a run refused before it began (its base URL's origin,
// or a check of the worker's: the capability does not resolve, its pin,
// inputs or secrets): a signed bundle like any run's (run_started with
// the capability and inputs, a sensitive one as a keyed digest;
// run_refused naming the failure code and the check; run_finished; the
// record; manifest and signature) and its index row through req.Gate
// with the bundle's anchor, with no session opened. The record ends the
// job FAILED; the queue does not retry a run that has a record.
// req.Capability is nil when it did not resolve (req.Ref names it).
func (r *Runner) Refuse(ctx context.Context, req jobs.Request, check string, why error) (*domain.RunRecord, error) {
	red := redact.New()
	msg := why.Error()
	var de *domain.Error
	if errors.As(why, &de) && de.Message != "" {
		msg = de.Message
	}
	code, now := domain.ErrorCode(why), time.Now()
	at := now.UTC().Format(time.RFC3339Nano)
	l := req.Capability
	ref, hash := req.Ref, req.ContentHash
	inputs := make(map[string]any, len(req.Inputs))
	var sensitive []string
	for k, v := range req.Inputs {
		inputs[k] = v
		if l != nil {
			if spec := l.Capability.Input(k); spec != nil && spec.Sensitive {
				sensitive = append(sensitive, k)
				red.RegisterLiteral(v)
			}
		}
	}
	if l != nil {
		ref, hash = l.Capability.Ref(), l.Hash
	}
	rec := evidence.RedactRecord(&domain.RunRecord{SchemaVersion: 1, RunID: req.RunID, Capability: ref,
		ContentHash: hash, Status: domain.StatusFailed, ExitCode: domain.StatusFailed.ExitCode(), FailureCode: code,
		Message: msg, StartedAt: at, FinishedAt: at, Steps: []domain.StepResult{}, BaseURL: req.BaseURL}, red)
	var dir string
	if r.cfg.DataDir != "" {
		var a evidence.Anchor
		var err error
		dir, a, err = evidence.WriteRefusal(r.cfg.DataDir, red, evidence.Refusal{Record: rec, Inputs: inputs, Sensitive: sensitive, Check: check, At: now})
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", req.RunID, err)
		}
		if req.Gate != nil {
			req.Gate.Anchor(a.ChainHead, a.Signature)
		}
	}
	r.cfg.Logger(red).WarnContext(ctx, "run refused", "run_id", req.RunID, "code", string(code), "check", check, "reason", rec.Message)
	if req.Gate != nil {
		if err := req.Gate.Unstarted(context.WithoutCancel(ctx), l, rec, dir); err != nil {
			return nil, err
		}
	}
	return rec, nil
}
