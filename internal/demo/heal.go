package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/heal"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/store"
	"github.com/cuahq/cua/internal/store/sqlite"
	"github.com/cuahq/cua/internal/surface"
)

// Drifts of the heal stage: MemberDesk renames Search to "Look up", then
// to "Go" (the seed picks the label).
var (
	healRename = mockapp.DriftSpec{Kind: mockapp.DriftSemantic, Change: "rename_search_button", Seed: 3}
	healBreak  = mockapp.DriftSpec{Kind: mockapp.DriftSemantic, Change: "rename_search_button", Seed: 9}
)

// healStage is issue 29's story in its own store (<data-dir>/demo/heal-*):
// MemberDesk renames "Search" to "Look up"; the lookup halts
// TARGET_NOT_FOUND and writes one proposal changing only that name; the
// proposal passes the drift and fault batteries; demo-reviewer approves
// it; its five canary runs succeed; a second rename ("Go") breaks the
// healed step, and that run reverts ID@active to the previous version.
func (e *env) healStage(ctx context.Context) *Result {
	r := &Result{Stage: Stage{Name: "heal: renamed label proposed, evaluated, approved, canaried, reverted", Capability: lookupCap,
		Inputs: map[string]string{"member_id": "12345"}, WantStatus: domain.StatusNeedsHuman, WantCode: domain.CodeTargetNotFound, WantDispatches: -1}}
	defer e.app.Reset(context.WithoutCancel(ctx)) //nolint:errcheck // best effort: later stages reset too
	svc, cat, done, err := e.healStore(ctx)
	if err != nil {
		return r.fail("%v", err)
	}
	defer done()
	run := func(ctx context.Context, l *capability.Loaded, inputs map[string]string, p replay.Proposer) (*domain.RunRecord, error) {
		o := replay.Options{Capability: l, Inputs: inputs, BaseURL: e.base, Secrets: demoSecrets(), Redactor: e.cfg.Redactor,
			DataDir: e.cfg.DataDir, RunID: e.cfg.RunID(), Logger: e.cfg.Logger, Proposer: p}
		return pipeline.Replay(ctx, pipeline.ReplayParams{Run: o, Library: cat.Library(ctx),
			Open: func(ctx context.Context) (surface.Surface, error) { return e.br.NewSession(ctx) }})
	}
	active := func(ctx context.Context, drift mockapp.DriftSpec, p replay.Proposer) (*domain.RunRecord, string, error) {
		if _, err := e.app.SetDrift(ctx, drift); err != nil {
			return nil, "", err
		}
		ref, err := svc.ResolveRef(ctx, lookupCap+heal.ActiveSuffix)
		if err != nil {
			return nil, "", err
		}
		l, _, err := cat.Resolve(ctx, ref)
		if err != nil {
			return nil, "", err
		}
		rec, err := run(ctx, l, r.Inputs, p)
		if err != nil {
			return nil, "", err
		}
		msg, err := svc.Observe(ctx, rec)
		return rec, msg, err
	}
	detail, err := e.healStory(ctx, r, svc, run, active)
	if err != nil {
		return r.fail("%v", err)
	}
	r.Pass, r.Detail = true, detail
	return r
}

// healStore opens a fresh SQLite store for the stage, adds the sealed
// capabilities, and returns the heal service and its catalog.
func (e *env) healStore(ctx context.Context) (*heal.Service, *catalog.Catalog, func(), error) {
	parent := filepath.Join(e.cfg.DataDir, "demo")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("heal: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "heal-")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("heal: %w", err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "cua.db"), store.Config{})
	if err != nil {
		return nil, nil, nil, err
	}
	cat, err := catalog.New(catalog.Config{Store: db})
	if err == nil {
		err = addSealed(ctx, cat, e.cfg.Capabilities)
	}
	if err != nil {
		_ = db.Close()
		return nil, nil, nil, err
	}
	return heal.New(db, cat, nil, e.cfg.Logger), cat, func() { _ = db.Close() }, nil
}

// healStory walks the stage; run replays a version, active replays
// ID@active under a drift and counts it toward the canary.
func (e *env) healStory(ctx context.Context, r *Result, svc *heal.Service,
	run func(context.Context, *capability.Loaded, map[string]string, replay.Proposer) (*domain.RunRecord, error),
	active func(context.Context, mockapp.DriftSpec, replay.Proposer) (*domain.RunRecord, string, error)) (string, error) {
	rec, _, err := active(ctx, healRename, svc)
	if err != nil {
		return "", err
	}
	r.Record = rec
	if rec.Status != domain.StatusNeedsHuman || rec.FailureCode != domain.CodeTargetNotFound {
		return "", fmt.Errorf("the renamed label: %s %s, want NEEDS_HUMAN TARGET_NOT_FOUND", rec.Status, rec.FailureCode)
	}
	ps, err := svc.List(ctx, lookupCap)
	if err != nil || len(ps) != 1 || len(ps[0].Refused) > 0 {
		return "", fmt.Errorf("after the halt: %d proposal(s), want one clean one (%v)", len(ps), err)
	}
	p := ps[0]
	l, err := p.Loaded(ctx)
	if err != nil {
		return "", err
	}
	evRun := func(ctx context.Context, l *capability.Loaded, in map[string]string) (*domain.RunRecord, error) {
		return run(ctx, l, in, nil)
	}
	ev, err := heal.Evaluate(ctx, e.app, l, heal.Batteries(&healRename), evRun, "demo-reviewer")
	if err != nil {
		return "", err
	}
	if p, err = svc.RecordEval(ctx, p.ID, ev); err != nil || !ev.Passed {
		return "", fmt.Errorf("eval of %s: passed %v (%v)", p.ID, ev.Passed, err)
	}
	if p, err = svc.Approve(ctx, p.ID, "demo-reviewer", heal.DefaultCanaryRuns); err != nil {
		return "", err
	}
	for i := range heal.DefaultCanaryRuns {
		rec, _, err := active(ctx, healRename, nil)
		if err != nil {
			return "", err
		}
		if rec.Status != domain.StatusSuccess || rec.Capability != p.Ref() {
			return "", fmt.Errorf("canary run %d: %s %s on %s", i+1, rec.Status, rec.FailureCode, rec.Capability)
		}
	}
	_, msg, err := active(ctx, healBreak, nil)
	if err != nil {
		return "", err
	}
	back, err := svc.Active(ctx, lookupCap)
	if err != nil || back == nil || back.Version != p.BaseVersion {
		return "", fmt.Errorf("after the breaking run: active %+v (%v), want %s; %s", back, err, p.BaseVersion, msg)
	}
	return fmt.Sprintf("%s proposed %q for step %s (%s); eval passed %d cases; approved by demo-reviewer; %d canary runs passed; %s",
		p.ID, p.Evidence.Candidate.Name, p.Step, p.Ref(), len(ev.Cases), heal.DefaultCanaryRuns, msg), nil
}
