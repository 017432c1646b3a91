package heal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// ErrState refuses a transition the proposal's state does not allow.
var ErrState = errors.New("heal: not allowed in this state")

func stateErr(p *Proposal, what string, want ...State) error {
	ws := make([]string, len(want))
	for i, w := range want {
		ws[i] = string(w)
	}
	return fmt.Errorf("heal proposal %s is %s: %s needs %s: %w", p.ID, p.State, what, strings.Join(ws, " or "), ErrState)
}

// RecordEval stores an evaluation of proposal id: evaluated when it
// passed, eval_failed otherwise. A quarantined proposal is never evaluated.
func (s *Service) RecordEval(ctx context.Context, id string, ev Eval) (*Proposal, error) {
	if err := checkPrincipal("eval by", ev.By); err != nil {
		return nil, err
	}
	p, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	switch p.State {
	case StateProposed, StateEvaluated, StateEvalFailed:
	default:
		return nil, stateErr(p, "eval", StateProposed, StateEvaluated, StateEvalFailed)
	}
	from := p.State
	ev.At = s.now().UTC()
	p.Eval = &ev
	p.State = StateEvalFailed
	passed := 0
	for _, c := range ev.Cases {
		if c.Passed {
			passed++
		}
	}
	if ev.Passed {
		p.State = StateEvaluated
	}
	note := fmt.Sprintf("%d of %d battery cases passed", passed, len(ev.Cases))
	return p, s.move(ctx, p, from, Transition{By: ev.By, Note: note}, nil)
}

// Approve makes an evaluated proposal's draft a catalog version and the
// capability's active version, as a canary of its first canaryRuns runs
// (DefaultCanaryRuns when 0). by must be a principal; the approval binds
// the base's and the draft's content hashes.
func (s *Service) Approve(ctx context.Context, id, by string, canaryRuns int) (*Proposal, error) {
	if err := checkPrincipal("--as", by); err != nil {
		return nil, err
	}
	if canaryRuns < 0 {
		return nil, fmt.Errorf("--canary %d: must be at least 1", canaryRuns)
	}
	if canaryRuns == 0 {
		canaryRuns = DefaultCanaryRuns
	}
	p, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.State != StateEvaluated || p.Eval == nil || !p.Eval.Passed {
		return nil, stateErr(p, "approve (a passing eval)", StateEvaluated)
	}
	if _, err := p.Loaded(ctx); err != nil {
		return nil, err
	}
	if s.cat == nil {
		return nil, errors.New("heal: approve needs a catalog")
	}
	if _, err := s.cat.Add(ctx, p.Ref()+" (heal "+p.ID+")", p.Body); err != nil {
		return nil, fmt.Errorf("heal proposal %s: add %s to the catalog: %w", p.ID, p.Ref(), err)
	}
	prev, err := s.Active(ctx, p.CapabilityID)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		prev = &Active{CapabilityID: p.CapabilityID, Version: p.BaseVersion, Hash: p.BaseHash}
	}
	p.Approval = &Approval{By: by, At: s.now().UTC(), OldHash: p.BaseHash, NewHash: p.Hash, Previous: prev.Ref()}
	p.Canary = &Canary{Runs: canaryRuns, Done: []string{}}
	p.State = StateCanary
	act := &Active{CapabilityID: p.CapabilityID, Version: p.Version, Hash: p.Hash, Proposal: p.ID, Previous: prev.Version, PreviousHash: prev.Hash}
	note := fmt.Sprintf("approved %s -> %s (%s -> %s); active as a canary of %d run(s)", p.BaseRef(), p.Ref(), p.BaseHash, p.Hash, canaryRuns)
	return p, s.move(ctx, p, StateEvaluated, Transition{By: by, Note: note}, act)
}

// Reject ends a proposal that never went active.
func (s *Service) Reject(ctx context.Context, id, by, why string) (*Proposal, error) {
	if err := checkPrincipal("--as", by); err != nil {
		return nil, err
	}
	p, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	switch p.State {
	case StateProposed, StateQuarantined, StateEvaluated, StateEvalFailed:
	default:
		return nil, stateErr(p, "reject", StateProposed, StateQuarantined, StateEvaluated, StateEvalFailed)
	}
	from := p.State
	p.State = StateRejected
	return p, s.move(ctx, p, from, Transition{By: by, Note: "rejected: " + why}, nil)
}

// Rollback restores the version that was active before proposal id made
// its draft active.
func (s *Service) Rollback(ctx context.Context, id, by string) (*Proposal, *Active, error) {
	if err := checkPrincipal("--as", by); err != nil {
		return nil, nil, err
	}
	p, err := s.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if p.State != StateCanary && p.State != StatePromoted {
		return nil, nil, stateErr(p, "rollback", StateCanary, StatePromoted)
	}
	cur, err := s.Active(ctx, p.CapabilityID)
	if err != nil {
		return nil, nil, err
	}
	if cur == nil || cur.Proposal != p.ID {
		return nil, nil, fmt.Errorf("heal proposal %s: %s is not the active version of %s: %w", p.ID, p.Ref(), p.CapabilityID, ErrState)
	}
	back := &Active{CapabilityID: p.CapabilityID, Version: cur.Previous, Hash: cur.PreviousHash}
	from := p.State
	p.State = StateRolledBack
	note := fmt.Sprintf("rolled back %s; active is %s again", p.Ref(), back.Ref())
	return p, back, s.move(ctx, p, from, Transition{By: by, Note: note}, back)
}

// Active returns the active version of capabilityID, nil when none was set.
func (s *Service) Active(ctx context.Context, capabilityID string) (*Active, error) {
	row, err := s.st.GetHealActive(ctx, capabilityID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("heal: active version of %s: %w", capabilityID, err)
	}
	a := new(Active)
	if err := json.Unmarshal(row.Doc, a); err != nil {
		return nil, fmt.Errorf("heal: active version of %s: %w", capabilityID, err)
	}
	return a, nil
}

// ActiveSuffix spells the active version in a reference: "ID@active".
const ActiveSuffix = "@active"

// ResolveRef turns "ID@active" into the active id@version, or the bare id
// (the catalog's highest sealed version) when no heal ever set one. Any
// other reference is returned as it is.
func (s *Service) ResolveRef(ctx context.Context, ref string) (string, error) {
	id, ok := strings.CutSuffix(ref, ActiveSuffix)
	if !ok {
		return ref, nil
	}
	a, err := s.Active(ctx, id)
	if err != nil || a == nil {
		return id, err
	}
	return a.Ref(), nil
}

// Observe judges a finished run of a healed active version. A run that is
// SUCCESS or a declared outcome counts toward the canary (its first N
// runs; the last one promotes it) and changes nothing after it. Any other
// run of the healed version, in the canary or after it, reverts the active
// version to the previous one: a heal is watched for as long as it is
// active. It returns what it did, "" when the run is of no healed active
// version (or a passing run after the canary).
func (s *Service) Observe(ctx context.Context, rec *domain.RunRecord) (string, error) {
	id, version, _ := strings.Cut(rec.Capability, "@")
	cur, err := s.Active(ctx, id)
	if err != nil || cur == nil || cur.Proposal == "" || cur.Version != version || cur.Hash != rec.ContentHash {
		return "", err
	}
	p, err := s.Get(ctx, cur.Proposal)
	if err != nil || (p.State != StateCanary && p.State != StatePromoted) || p.Canary == nil {
		return "", err
	}
	ok := rec.Status == domain.StatusSuccess || rec.Status == domain.StatusBusinessOutcome
	if ok && p.State == StatePromoted {
		return "", nil
	}
	if ok {
		p.Canary.Done = append(p.Canary.Done, rec.RunID)
		n := len(p.Canary.Done)
		msg := fmt.Sprintf("canary run %d of %d of %s passed (%s)", n, p.Canary.Runs, p.Ref(), rec.Status)
		if n >= p.Canary.Runs {
			p.State = StatePromoted
			msg += fmt.Sprintf("; %s is promoted", p.Ref())
		}
		return msg, s.move(ctx, p, StateCanary, Transition{By: "run " + rec.RunID, RunID: rec.RunID, Note: msg}, nil)
	}
	from := p.State
	p.Canary.Failed = rec.RunID
	p.State = StateReverted
	back := &Active{CapabilityID: id, Version: cur.Previous, Hash: cur.PreviousHash}
	which := fmt.Sprintf("canary run %d of %d", len(p.Canary.Done)+1, p.Canary.Runs)
	if from == StatePromoted {
		which = "a run after its canary"
	}
	msg := strings.TrimSpace(fmt.Sprintf("reverted %s@active to %s: %s of %s ended %s %s", id, back.Version, which, p.Ref(), rec.Status, rec.FailureCode))
	return msg, s.move(ctx, p, from, Transition{By: "run " + rec.RunID, RunID: rec.RunID, Note: msg}, back)
}
