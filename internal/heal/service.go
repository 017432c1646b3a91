package heal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/catalog"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/principal"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/store"
)

// Service keeps proposals in a store.HealStore and approved versions in a
// catalog. It is safe for concurrent use when both are.
type Service struct {
	st     store.HealStore
	cat    *catalog.Catalog
	now    func() time.Time
	logger *slog.Logger
}

// New returns a Service; now is time.Now and logger slog.Default when nil.
func New(st store.HealStore, cat *catalog.Catalog, now func() time.Time, logger *slog.Logger) *Service {
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Service{st: st, cat: cat, now: now, logger: logger}
}

// Open returns a Service over st when its adapter keeps heal proposals.
func Open(st store.Store, cat *catalog.Catalog, logger *slog.Logger) (*Service, error) {
	hs, ok := st.(store.HealStore)
	if !ok {
		return nil, fmt.Errorf("heal: the store (%T) keeps no heal proposals", st)
	}
	return New(hs, cat, nil, logger), nil
}

// Watch is what a run queue needs of heal: "ID@active" resolved to the
// active version, and each finished run of it judged (a pass, a
// promotion or a revert).
type Watch interface {
	ResolveRef(ctx context.Context, ref string) (string, error)
	Observe(ctx context.Context, rec *domain.RunRecord) (string, error)
}

// OpenWatch is Open as a Watch: nil (no heal, "ID@active" unresolved)
// when st keeps no heal proposals.
func OpenWatch(st store.Store, cat *catalog.Catalog) Watch {
	if s, err := Open(st, cat, nil); err == nil {
		return s
	}
	return nil
}

// Note is what a halted run's evidence records of its proposal (heal.jsonl).
type Note struct {
	Step     string `json:"step"`
	Proposal string `json:"proposal,omitempty"`
	Version  string `json:"version,omitempty"`
	State    State  `json:"state,omitempty"`
	Name     string `json:"name,omitempty"`
	Why      string `json:"why"`
}

// Halted implements replay.Proposer: it writes a proposal when the halt
// has exactly one candidate, and returns the note for the run's evidence
// (also when it proposed nothing, saying why).
func (s *Service) Halted(ctx context.Context, h replay.Halt) any {
	p, why, err := s.Propose(ctx, h)
	if err != nil {
		s.logger.WarnContext(ctx, "heal proposal not written", "run_id", h.RunID, "step", h.Step, "error", err)
		return Note{Step: h.Step, Why: "no proposal: " + err.Error()}
	}
	if p == nil {
		return Note{Step: h.Step, Why: "no proposal: " + why}
	}
	return Note{Step: h.Step, Proposal: p.ID, Version: p.Version, State: p.State, Name: p.Evidence.Candidate.Name, Why: why}
}

// Drifted implements replay.DriftProposer: a target that resolved on a
// weaker rung than recorded, to a node whose name is not the target's,
// gets a proposal naming that node, as a halt's candidate would.
func (s *Service) Drifted(ctx context.Context, h replay.Halt) any { return s.Halted(ctx, h) }

// drifted is the candidate of a drift: the node the ladder resolved.
func drifted(h replay.Halt) (Candidate, string, bool) {
	n := &h.Snapshot.Nodes[h.Node]
	c := Candidate{Path: n.Path, Role: n.Role, Name: n.Name, Frame: n.Frame, Region: n.Region}
	switch {
	case n.Name == "":
		return c, "the node it resolved to has no name", false
	case h.Target.Name != nil && h.Target.Name.Input != "":
		return c, "the step's name takes an input; a templated name is never healed", false
	case h.Target.Name != nil && n.Name == h.Target.Name.Value:
		return c, "the node it resolved to already carries the step's name", false
	}
	return c, fmt.Sprintf("the ladder resolved it, alone, on %s (recorded %s)", h.Strategy, h.Target.RecordedStrategy), true
}

// Propose writes a proposal for h, or returns nil and why not. A halt that
// an open proposal already covers (same base, step and name) returns that
// proposal and writes nothing.
func (s *Service) Propose(ctx context.Context, h replay.Halt) (*Proposal, string, error) {
	if h.Capability == nil || h.Capability.Capability == nil {
		return nil, "", errors.New("heal: the halt names no capability")
	}
	base := h.Capability.Capability
	var cand Candidate
	var why string
	var considered []string
	ok := false
	if h.Node >= 0 && h.Snapshot != nil && h.Node < len(h.Snapshot.Nodes) {
		cand, why, ok = drifted(h)
	} else {
		cand, why, considered, ok = Find(h)
	}
	if !ok {
		return nil, why, nil
	}
	existing, err := s.List(ctx, base.ID)
	if err != nil {
		return nil, "", err
	}
	for _, p := range existing {
		if p.BaseHash == h.Capability.Hash && p.Step == h.Step && p.Evidence.Candidate.Name == cand.Name && open(p.State) {
			return p, "already proposed as " + p.ID, nil
		}
	}
	next, err := s.nextVersion(ctx, base, existing)
	if err != nil {
		return nil, "", err
	}
	draft, body, err := Draft(ctx, base, next, h.Step, cand.Name)
	if err != nil {
		return nil, "", err
	}
	changes, err := Diff(base, draft.Capability)
	if err != nil {
		return nil, "", err
	}
	p := &Proposal{
		ID: newID(), CapabilityID: base.ID, BaseVersion: base.Version, BaseHash: h.Capability.Hash,
		Version: next, Hash: draft.Hash, Body: body, State: StateProposed, Step: h.Step,
		Changes: changes, Refused: Refused(changes), Created: s.now().UTC(),
		Evidence: Evidence{RunID: h.RunID, Code: h.Code, Message: h.Message, URL: h.Snapshot.URL,
			Before: fmt.Sprintf("screenshots/step-%03d.png", h.StepNumber), Candidate: cand, Why: why, Considered: considered},
	}
	if len(p.Refused) > 0 {
		p.State = StateQuarantined
	}
	note := fmt.Sprintf("run %s halted %s at step %s; proposed name %q", h.RunID, h.Code, h.Step, cand.Name)
	if h.Code == "" {
		note = fmt.Sprintf("run %s: %s; proposed name %q", h.RunID, h.Message, cand.Name)
	}
	if err := s.add(ctx, p, Transition{To: p.State, By: "run " + h.RunID, RunID: h.RunID, Note: note}); err != nil {
		return nil, "", err
	}
	return p, why, nil
}

// open reports whether a proposal in state st may still become active.
func open(st State) bool {
	return slices.Contains([]State{StateProposed, StateQuarantined, StateEvaluated, StateCanary, StatePromoted}, st)
}

// nextVersion is the base's next patch version that neither the catalog
// nor another proposal holds.
func (s *Service) nextVersion(ctx context.Context, base *domain.Capability, existing []*Proposal) (string, error) {
	v := base.Version
	for range 100 {
		next, err := NextPatch(v)
		if err != nil {
			return "", err
		}
		v = next
		if slices.ContainsFunc(existing, func(p *Proposal) bool { return p.Version == v }) {
			continue
		}
		if s.cat != nil {
			if _, _, err := s.cat.Resolve(ctx, base.ID+"@"+v); err == nil {
				continue
			}
		}
		return v, nil
	}
	return "", fmt.Errorf("heal: no free patch version after %s", base.Version)
}

// Get returns the proposal id.
func (s *Service) Get(ctx context.Context, id string) (*Proposal, error) {
	row, err := s.st.GetHealProposal(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("heal proposal %s: %w", id, err)
	}
	return decode(row)
}

// List returns the proposals of capabilityID (every one when empty),
// oldest first.
func (s *Service) List(ctx context.Context, capabilityID string) ([]*Proposal, error) {
	rows, err := s.st.ListHealProposals(ctx, capabilityID)
	if err != nil {
		return nil, fmt.Errorf("heal: list proposals: %w", err)
	}
	out := make([]*Proposal, 0, len(rows))
	for _, r := range rows {
		p, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// History returns the transitions of proposal id, oldest first.
func (s *Service) History(ctx context.Context, id string) ([]Transition, error) {
	rows, err := s.st.ListHealTransitions(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("heal proposal %s: history: %w", id, err)
	}
	out := make([]Transition, 0, len(rows))
	for _, r := range rows {
		var t Transition
		if err := json.Unmarshal(r.Doc, &t); err != nil {
			return nil, fmt.Errorf("heal proposal %s: history: %w", id, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// Loaded parses the proposal's draft and checks its hash.
func (p *Proposal) Loaded(ctx context.Context) (*capability.Loaded, error) {
	l, err := capability.ParseContext(ctx, p.Ref(), p.Body)
	if err != nil {
		return nil, fmt.Errorf("heal proposal %s: %w", p.ID, err)
	}
	if l.Hash != p.Hash {
		return nil, domain.Errorf(domain.CodeHashMismatch, "heal proposal %s: its draft hashes to %s, the proposal recorded %s", p.ID, l.Hash, p.Hash)
	}
	return l, nil
}

func (s *Service) add(ctx context.Context, p *Proposal, t Transition) error {
	row, tr, err := s.rows(p, t)
	if err != nil {
		return err
	}
	if err := s.st.AddHealProposal(ctx, row, tr); err != nil {
		return fmt.Errorf("heal proposal %s: %w", p.ID, err)
	}
	return nil
}

// move writes p (now in its new state) if it is still in from, with the
// transition and, when set, the capability's new active version.
func (s *Service) move(ctx context.Context, p *Proposal, from State, t Transition, active *Active) error {
	t.From = from
	row, tr, err := s.rows(p, t)
	if err != nil {
		return err
	}
	var act *store.HealActive
	if active != nil {
		doc, err := json.Marshal(active)
		if err != nil {
			return err
		}
		act = &store.HealActive{CapabilityID: active.CapabilityID, UpdatedAt: t.At, Doc: doc}
	}
	if err := s.st.UpdateHealProposal(ctx, row, string(from), tr, act); err != nil {
		return fmt.Errorf("heal proposal %s: %s -> %s: %w", p.ID, from, p.State, err)
	}
	return nil
}

func (s *Service) rows(p *Proposal, t Transition) (store.HealProposal, store.HealTransition, error) {
	now := s.now().UTC()
	t.Proposal, t.To, t.At = p.ID, p.State, now
	doc, err := json.Marshal(p)
	if err != nil {
		return store.HealProposal{}, store.HealTransition{}, err
	}
	tdoc, err := json.Marshal(t)
	if err != nil {
		return store.HealProposal{}, store.HealTransition{}, err
	}
	return store.HealProposal{ID: p.ID, CapabilityID: p.CapabilityID, State: string(p.State), CreatedAt: p.Created, UpdatedAt: now, Doc: doc},
		store.HealTransition{ProposalID: p.ID, At: now, Doc: tdoc}, nil
}

func decode(r store.HealProposal) (*Proposal, error) {
	p := new(Proposal)
	if err := json.Unmarshal(r.Doc, p); err != nil {
		return nil, fmt.Errorf("heal proposal %s: %w", r.ID, err)
	}
	return p, nil
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "heal-" + hex.EncodeToString(b[:])
}

// checkPrincipal refuses an empty or malformed principal.
func checkPrincipal(field, by string) error {
	if by == "" {
		return fmt.Errorf("%s: a principal is required", field)
	}
	if err := principal.CheckString(by); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}
