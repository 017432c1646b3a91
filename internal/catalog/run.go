package catalog

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

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/store"
)

// RunParams says how a replay goes through the catalog.
type RunParams struct {
	// Unattended requires an approval that covers the run's inputs
	// (Authorize) before a surface opens.
	Unattended bool
	// Eval marks the run as an eval replay: a SUCCESS with no unauthorized
	// dispatch counts towards ApproveParams.FromEval for its content hash.
	Eval bool
	// IdempotencyKey, when set, is claimed for the capability id: a second
	// run with the same key returns the first run's record without running.
	IdempotencyKey string
}

// Gate indexes one replay in the store and admits it: pipeline.Replay
// calls Begin once inputs bind and every called capability resolves,
// before a surface opens, and End with the finished record. A Gate serves
// one run; it is not safe for concurrent use.
type Gate struct {
	c   *Catalog
	p   RunParams
	run store.Run
}

// Gate returns a Gate for one run.
func (c *Catalog) Gate(p RunParams) *Gate { return &Gate{c: c, p: p} }

// Eval reports whether the gate's run is an eval replay (RunParams.Eval).
func (g *Gate) Eval() bool { return g.p.Eval }

// ErrEffectUnconfirmed refuses a run whose idempotency key was claimed by a
// run with an effect sent_unconfirmed: whether it happened is unknown.
var ErrEffectUnconfirmed = errors.New("the first run has an effect sent_unconfirmed")

// ErrKeyOtherInputs refuses a run whose idempotency key was claimed by a
// run given other inputs.
var ErrKeyOtherInputs = errors.New("the idempotency key is bound to other inputs")

// InputsDigest is the digest of a run's inputs kept beside its
// idempotency key: per input a salted hash of its value, never of an input
// c declares sensitive (a secret is never stored, even hashed).
func InputsDigest(c *domain.Capability, key string, inputs map[string]any) string {
	d := map[string]string{}
	for name, v := range inputs {
		if spec := c.Input(name); spec != nil && spec.Sensitive {
			continue
		}
		h := sha256.Sum256([]byte(c.ID + "\x00" + key + "\x00" + name + "\x00" + fmt.Sprint(v)))
		d[name] = hex.EncodeToString(h[:12])
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// DigestDiff names the inputs two digests disagree on, sorted; nothing
// when either is empty (a run indexed before digests were kept).
func DigestDiff(a, b string) []string {
	var x, y map[string]string
	if a == "" || b == "" || json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(x)) {
		if x[k] != y[k] {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(y)) {
		if _, ok := x[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// Begin admits the run runID of l with the bound inputs. It returns the
// first run's record (prior, non-nil) when the idempotency key was
// claimed already; an error (EFFECT_UNKNOWN naming the first run) when that
// run has an effect sent_unconfirmed; and, for an unattended run, the
// approver of the approval that covers it, or an APPROVAL_REQUIRED error.
// A refused run is indexed as FAILED, without claiming the key.
func (g *Gate) Begin(ctx context.Context, runID string, l *capability.Loaded, inputs map[string]any, evidencePath string) (prior *domain.RunRecord, approver string, err error) {
	cp := l.Capability
	g.run = store.Run{ID: runID, CapabilityID: cp.ID, Version: cp.Version, ContentHash: l.Hash, Status: domain.StatusRunning,
		StartedAt: g.c.now(), EvidencePath: evidencePath, Eval: g.p.Eval}
	if g.p.IdempotencyKey != "" {
		g.run.InputsDigest = InputsDigest(cp, g.p.IdempotencyKey, inputs)
		if first, err := g.c.st.LookupIdempotencyKey(ctx, cp.ID, g.p.IdempotencyKey); err == nil {
			return g.prior(ctx, first)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, "", err
		}
	}
	if g.p.Unattended {
		a, err := g.c.Authorize(ctx, l, inputs, runID)
		if err != nil {
			return nil, "", g.refuse(ctx, err)
		}
		g.run.ApprovalID, approver = a.ID, a.Approver
	}
	g.run.IdempotencyKey = g.p.IdempotencyKey
	if _, err := g.c.st.RecordRun(ctx, g.run); err != nil {
		var ie *store.IdempotencyError
		if errors.As(err, &ie) {
			return g.prior(ctx, ie.RunID)
		}
		return nil, "", err
	}
	return nil, approver, nil
}

// refuse indexes the run as refused and returns why.
func (g *Gate) refuse(ctx context.Context, why error) error {
	r := g.run
	r.Status, r.FailureCode, r.EndedAt = domain.StatusFailed, domain.ErrorCode(why), g.c.now()
	if _, err := g.c.st.RecordRun(ctx, r); err != nil {
		return errors.Join(why, fmt.Errorf("index refused run %s: %w", r.ID, err))
	}
	if _, err := g.c.st.UpdateRun(ctx, r); err != nil {
		return errors.Join(why, fmt.Errorf("index refused run %s: %w", r.ID, err))
	}
	return why
}

func (g *Gate) prior(ctx context.Context, runID string) (*domain.RunRecord, string, error) {
	first, err := g.c.st.GetRun(ctx, runID)
	if err != nil {
		return nil, "", fmt.Errorf("idempotency key %q: first run %s: %w", g.p.IdempotencyKey, runID, err)
	}
	if diff := DigestDiff(first.InputsDigest, g.run.InputsDigest); len(diff) > 0 {
		return nil, "", &domain.Error{Code: domain.CodeInputInvalid, Err: ErrKeyOtherInputs,
			Message: fmt.Sprintf("idempotency key %q is bound to run %s with other inputs (%s differ): a key names one operation for ever; use a new key for another",
				g.p.IdempotencyKey, runID, strings.Join(diff, ", "))}
	}
	rec, err := Record(first)
	if err != nil {
		return nil, "", err
	}
	if rec.Effects != nil && rec.Effects.Unconfirmed {
		return nil, "", &domain.Error{Code: domain.CodeEffectUnknown, Err: ErrEffectUnconfirmed,
			Message: fmt.Sprintf("idempotency key %q is held by run %s, whose effect is sent_unconfirmed: check the application, then resolve that run before running again", g.p.IdempotencyKey, runID)}
	}
	return rec, "", nil
}

// Unstarted indexes a run that ended before it could begin (inputs that
// do not bind, a called capability that does not resolve, a refusal of
// Begin, whose row it completes) with its status, failure code, evidence
// path and anchor. It claims no idempotency key: the run did nothing. l
// is nil when the capability did not resolve: the row names the record's
// capability and content hash.
func (g *Gate) Unstarted(ctx context.Context, l *capability.Loaded, rec *domain.RunRecord, evidencePath string) error {
	id, version, _ := strings.Cut(rec.Capability, "@")
	hash := rec.ContentHash
	if l != nil {
		id, version, hash = l.Capability.ID, l.Capability.Version, l.Hash
	}
	now := g.c.now()
	r := store.Run{ID: rec.RunID, CapabilityID: id, Version: version, ContentHash: hash, Status: rec.Status,
		FailureCode: rec.FailureCode, Outcome: rec.Outcome, StartedAt: now, EndedAt: now, EvidencePath: evidencePath, Eval: g.p.Eval,
		ChainHead: g.run.ChainHead, Signature: g.run.Signature}
	if _, err := g.c.st.RecordRun(ctx, r); err != nil && (!errors.Is(err, store.ErrExists) || g.run.ID != rec.RunID) {
		return fmt.Errorf("index run %s: %w", r.ID, err)
	}
	if _, err := g.c.st.UpdateRun(ctx, r); err != nil {
		return fmt.Errorf("index run %s: %w", r.ID, err)
	}
	return nil
}

// Anchor keeps the run's evidence anchor (invariant 18: the chain head of
// its finished bundle and its manifest's signature), which End and
// Unstarted write into the run index.
func (g *Gate) Anchor(chainHead, signature string) {
	g.run.ChainHead, g.run.Signature = chainHead, signature
}

// End writes the finished record into the run index.
func (g *Gate) End(ctx context.Context, rec *domain.RunRecord) error {
	r := g.run
	r.Status, r.Outcome, r.FailureCode, r.EndedAt = rec.Status, rec.Outcome, rec.FailureCode, g.c.now()
	r.UnauthorizedDispatches = UnauthorizedDispatches(rec)
	if rec.Effects != nil {
		b, err := json.Marshal(rec.Effects)
		if err != nil {
			return fmt.Errorf("index run %s: effects: %w", r.ID, err)
		}
		r.Effects = b
	}
	if len(rec.Outputs) > 0 {
		b, err := json.Marshal(rec.Outputs)
		if err != nil {
			return fmt.Errorf("index run %s: outputs: %w", r.ID, err)
		}
		r.Outputs = b
	}
	if _, err := g.c.st.UpdateRun(ctx, r); err != nil {
		return fmt.Errorf("index run %s: %w", r.ID, err)
	}
	return nil
}

// UnauthorizedDispatches counts the steps of rec that policy refused.
// Invariant 2 makes a dispatch without authorization impossible, so what an
// eval run can show is an attempt: a step refused by policy disqualifies it.
func UnauthorizedDispatches(rec *domain.RunRecord) int {
	n := 0
	for _, s := range rec.Steps {
		switch s.Failure {
		case domain.CodePolicyDenied, domain.CodeApprovalRequired, domain.CodeDomainNotAllowed:
			n++
		}
	}
	return n
}

// Record rebuilds a run record from the run index: what an idempotent
// repeat returns instead of running.
func Record(r store.Run) (*domain.RunRecord, error) {
	rec := &domain.RunRecord{SchemaVersion: 1, RunID: r.ID, Capability: r.CapabilityID + "@" + r.Version,
		ContentHash: r.ContentHash, Status: r.Status, ExitCode: r.Status.ExitCode(), Outcome: r.Outcome,
		FailureCode: r.FailureCode, StartedAt: r.StartedAt.Format(time.RFC3339Nano), Steps: []domain.StepResult{}}
	if !r.EndedAt.IsZero() {
		rec.FinishedAt = r.EndedAt.Format(time.RFC3339Nano)
		rec.DurationMS = r.EndedAt.Sub(r.StartedAt).Milliseconds()
	}
	if len(r.Effects) > 0 {
		rec.Effects = &domain.Effects{}
		if err := json.Unmarshal(r.Effects, rec.Effects); err != nil {
			return nil, fmt.Errorf("run %s: effects: %w", r.ID, err)
		}
	}
	if len(r.Outputs) > 0 {
		if err := json.Unmarshal(r.Outputs, &rec.Outputs); err != nil {
			return nil, fmt.Errorf("run %s: outputs: %w", r.ID, err)
		}
	}
	return rec, nil
}

// Runs lists the run index, newest first.
func (c *Catalog) Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	return c.st.ListRuns(ctx, f)
}

// Run returns one run of the index.
func (c *Catalog) Run(ctx context.Context, id string) (store.Run, error) {
	r, err := c.st.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return r, &store.NotFoundError{What: "run " + id, Reason: "no such run in the catalog", Fix: "cua runs list"}
	}
	return r, err
}

// Library serves the catalog's sealed versions to a replay by "id" or
// "id@version" (it satisfies replay.Library, whose Lookup takes no
// context, so it holds ctx for its lookups). Preflight then checks each
// one against its pinned content hash.
func (c *Catalog) Library(ctx context.Context) *Library { return &Library{c: c, ctx: ctx} }

// Library is a replay library over a catalog, bound to one run's context.
type Library struct {
	c   *Catalog
	ctx context.Context
}

// Lookup resolves ref in the catalog and verifies its stored bytes.
func (l *Library) Lookup(ref string) (*capability.Loaded, error) {
	got, _, err := l.c.Resolve(l.ctx, ref)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, domain.Errorf(domain.CodeCapabilityInvalid, "%s: no such capability in the catalog (cua catalog list)", ref)
		}
		return nil, err
	}
	return got, nil
}
