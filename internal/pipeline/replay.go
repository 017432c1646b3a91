package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
)

// ReplayParams is one replay of a sealed capability.
type ReplayParams struct {
	// Run is the replay without Library and Surface, which Replay fills.
	// Run.Capability is required.
	Run replay.Options
	// LibraryDir holds the capabilities Run.Capability may call.
	LibraryDir string
	// Library, when set, serves them instead of LibraryDir (a catalog).
	Library replay.Library
	// Gate, when set, admits and indexes the run (a catalog's run index);
	// nil runs it unindexed, as from a file.
	Gate Gate
	// Open opens the session the run acts on; it is called only once the
	// inputs bind and every called capability resolves.
	Open Opener
	// Pool, when set, lends the session instead (Open is not called) and
	// takes it back when the run ends.
	Pool SessionPool
}

// SessionPool lends sessions that outlive a run (a worker's warm,
// signed-on browser contexts, launch.Pool). Take returns a session and
// whether an earlier run used it; Return gets it back with the run's
// record (nil when the run made none) and keeps or closes it.
type SessionPool interface {
	Take(ctx context.Context) (s surface.Surface, warm bool, err error)
	Return(s surface.Surface, rec *domain.RunRecord)
}

// Replay runs p.Run.Capability and returns its record, messages redacted.
//
// Inputs are bound, and every prerequisite and remedy is resolved, sealed
// and pinned, before a surface opens: a bad input or a missing, unsealed
// or tampered sub-capability costs no surface and no dispatch, and still
// leaves a run record (FAILED with its failure code). The error is
// non-nil only when the run could not be made or recorded: the library
// does not load, the surface does not open, evidence is unwritable.
func Replay(ctx context.Context, p ReplayParams) (*domain.RunRecord, error) {
	o := p.Run
	if o.Capability == nil {
		return nil, fmt.Errorf("replay: no capability")
	}
	bound, err := capability.BindInputs(o.Capability.Capability, o.Inputs)
	if err != nil {
		return unstarted(ctx, p, replay.Options{Capability: o.Capability, Inputs: o.Inputs, BaseURL: o.BaseURL,
			Redactor: o.Redactor, DataDir: o.DataDir, RunID: o.RunID, Logger: o.Logger})
	}
	lib, err := library(p)
	if err != nil {
		return nil, err
	}
	if err := replay.Preflight(o.Capability, lib); err != nil {
		return unstarted(ctx, p, replay.Options{Capability: o.Capability, Library: lib, Inputs: o.Inputs, BaseURL: o.BaseURL,
			Redactor: o.Redactor, DataDir: o.DataDir, RunID: o.RunID, Logger: o.Logger})
	}
	if p.Gate != nil {
		return gated(ctx, p, lib, bound)
	}
	return open(ctx, p, lib, o)
}

// library is p.Library, else the directory library with the capability
// being run added.
func library(p ReplayParams) (replay.Library, error) {
	if p.Library != nil {
		return p.Library, nil
	}
	lib, err := replay.LoadDir(p.LibraryDir)
	if err != nil {
		return nil, err
	}
	if err := lib.Add(p.Run.Capability); err != nil {
		return nil, err
	}
	return lib, nil
}

func open(ctx context.Context, p ReplayParams, lib replay.Library, o replay.Options) (*domain.RunRecord, error) {
	if p.Pool != nil {
		sess, warm, err := p.Pool.Take(ctx)
		if err != nil {
			return nil, err
		}
		o.Library, o.Surface, o.Warm = lib, sess, warm
		rec, err := record(ctx, o)
		p.Pool.Return(sess, rec)
		return rec, err
	}
	sess, err := p.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	o.Library, o.Surface = lib, sess
	return record(ctx, o)
}

// Gate admits a run before its surface opens and indexes it
// (catalog.Gate). Begin returns the record of an earlier run instead
// (prior) when the run must not happen again, or the approver of the
// approval that covers an unattended run; an error it returns with a
// domain failure code refuses the run. End receives the finished record.
// Unstarted indexes a run that ended before it could begin (inputs that
// do not bind, a called capability that does not resolve).
type Gate interface {
	Begin(ctx context.Context, runID string, l *capability.Loaded, inputs map[string]any, evidencePath string) (prior *domain.RunRecord, approver string, err error)
	End(ctx context.Context, rec *domain.RunRecord) error
	Unstarted(ctx context.Context, l *capability.Loaded, rec *domain.RunRecord, evidencePath string) error
}

// unstarted records a run that ends before a surface opens and, through
// p.Gate, indexes it.
func unstarted(ctx context.Context, p ReplayParams, o replay.Options) (*domain.RunRecord, error) {
	rec, err := record(ctx, o)
	if err != nil || p.Gate == nil {
		return rec, err
	}
	var evidencePath string
	if o.DataDir != "" {
		evidencePath = filepath.Join(o.DataDir, "runs", o.RunID)
	}
	anchor(p.Gate, o.DataDir, o.RunID)
	return rec, p.Gate.Unstarted(ctx, o.Capability, rec, evidencePath)
}

// Anchorer is a Gate that keeps a run's evidence anchor in its index
// (catalog.Gate): the chain head of the finished bundle and its
// manifest's signature (DESIGN invariant 18).
type Anchorer interface {
	Anchor(chainHead, signature string)
}

// anchor hands g the anchor of the finished bundle of run id under
// dataDir, when g keeps one and the bundle was finished here.
func anchor(g Gate, dataDir, id string) {
	a, ok := g.(Anchorer)
	if !ok || dataDir == "" {
		return
	}
	if an, err := evidence.ReadAnchor(filepath.Join(dataDir, "runs", id)); err == nil {
		a.Anchor(an.ChainHead, an.Signature)
	}
}

// gated runs o through p.Gate: a refusal returns a FAILED record with no
// surface opened and no dispatch; an approved unattended run may take
// irreversible actions under its approval.
func gated(ctx context.Context, p ReplayParams, lib replay.Library, bound map[string]any) (*domain.RunRecord, error) {
	o := p.Run
	var evidencePath string
	if o.DataDir != "" {
		evidencePath = filepath.Join(o.DataDir, "runs", o.RunID)
	}
	prior, approver, err := p.Gate.Begin(ctx, o.RunID, o.Capability, bound, evidencePath)
	switch {
	case err != nil && domain.ErrorCode(err) != domain.CodeInternal:
		return refusedRun(ctx, p, bound, err)
	case err != nil:
		return nil, err
	case prior != nil:
		return prior, nil
	}
	if approver != "" {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		o.AllowIrreversible = true
		o.Approval = &policy.Approval{Capability: o.Capability.Capability.Ref(), ContentHash: o.Capability.Hash,
			Approver: approver, ApprovedAt: now().UTC().Format(time.RFC3339)}
	}
	warnEval(ctx, p, o)
	rec, err := open(ctx, p, lib, o)
	if err != nil {
		rec = refused(o, err)
		rec.FailureCode = domain.CodeSurfaceError
	}
	if o.Evidence == nil {
		anchor(p.Gate, o.DataDir, o.RunID)
	}
	if gerr := p.Gate.End(context.WithoutCancel(ctx), rec); gerr != nil {
		return rec, errors.Join(err, gerr)
	}
	return rec, err
}

// refusedRun records a run the gate refused (no approval covers it, its
// idempotency key is bound to other inputs or to an unconfirmed effect):
// a signed bundle like any run's (run_started, run_refused naming the
// check, run_finished, record, manifest and signature) and its index row
// with the bundle's anchor (invariant 18).
func refusedRun(ctx context.Context, p ReplayParams, bound map[string]any, why error) (*domain.RunRecord, error) {
	o := p.Run
	red := o.Redactor
	if red == nil {
		red = redact.New()
	}
	var sensitive []string
	for name, v := range bound {
		if spec := o.Capability.Capability.Input(name); spec != nil && spec.Sensitive {
			sensitive = append(sensitive, name)
			red.RegisterLiteral(fmt.Sprint(v))
		}
	}
	o.Redactor = red
	rec := refused(o, why)
	check := evidence.CheckIdempotencyKey
	if rec.FailureCode == domain.CodeApprovalRequired {
		check = evidence.CheckApproval
	}
	ref := evidence.Refusal{Record: rec, Inputs: bound, Sensitive: sensitive, Check: check, At: now(o)}
	var evidencePath string
	switch {
	case o.Evidence != nil:
		// The caller's bundle: it closes it, so it is not anchored here.
		evidencePath = o.Evidence.Dir()
		if err := o.Evidence.AppendRefusal(ref); err != nil {
			return nil, fmt.Errorf("run %s: %w", o.RunID, err)
		}
	case o.DataDir != "":
		dir, a, err := evidence.WriteRefusal(o.DataDir, red, ref)
		if err != nil {
			return nil, err
		}
		evidencePath = dir
		if an, ok := p.Gate.(Anchorer); ok {
			an.Anchor(a.ChainHead, a.Signature)
		}
	}
	if err := p.Gate.Unstarted(context.WithoutCancel(ctx), o.Capability, rec, evidencePath); err != nil {
		return rec, err
	}
	return rec, nil
}

func now(o replay.Options) time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// refused is the record of a run refused before its surface opened.
func refused(o replay.Options, why error) *domain.RunRecord {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	t := now().UTC().Format(time.RFC3339Nano)
	msg := why.Error()
	var de *domain.Error
	if errors.As(why, &de) && de.Message != "" {
		msg = de.Message
	}
	rec := &domain.RunRecord{SchemaVersion: 1, RunID: o.RunID, Capability: o.Capability.Capability.Ref(),
		ContentHash: o.Capability.Hash, Status: domain.StatusFailed, ExitCode: domain.StatusFailed.ExitCode(),
		FailureCode: domain.ErrorCode(why), Message: msg, StartedAt: t, FinishedAt: t, Steps: []domain.StepResult{},
		BaseURL: o.BaseURL}
	red := o.Redactor
	if red == nil {
		red = redact.New()
	}
	return evidence.RedactRecord(rec, red)
}

// record runs o; the engine returns the record already redacted.
func record(ctx context.Context, o replay.Options) (*domain.RunRecord, error) {
	return replay.Run(ctx, o)
}

// SealPinned seals the capability file at path, pinning every capability
// it calls to the id@version and content hash found in the library
// directory dir (a bare id resolves to its highest sealed version, a
// written pin to the file with that content), and returns its content hash
// (see capability.SealPinned).
func SealPinned(path, dir string) (string, error) {
	var lib *replay.DirLibrary
	return capability.SealPinned(path, func(ref, pin string) (*capability.Loaded, error) {
		if lib == nil {
			var err error
			if lib, err = replay.LoadDir(dir); err != nil {
				return nil, err
			}
		}
		l, err := replay.Resolve(lib, ref, pin)
		if err != nil {
			return nil, fmt.Errorf("%w (library %s)", err, dir)
		}
		return l, nil
	})
}
