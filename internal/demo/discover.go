package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/model/cassette"
	"github.com/cuahq/cua/internal/pipeline"
	"github.com/cuahq/cua/internal/surface"
)

// Pipeline is the [Discoverer] `cua discover` itself uses: internal/pipeline
// explores, compiles, seals and eval-replays.
var Pipeline Discoverer = DiscovererFunc(func(ctx context.Context, r DiscoverRequest) (*Discovered, error) {
	out, err := pipeline.Run(ctx, pipeline.Params{Agent: r.Agent, Open: func(context.Context) (surface.Surface, error) { return r.Open() },
		Out: r.Out, ID: r.ID, Version: r.Version, ProvenanceID: r.ProvenanceID, Eval: true})
	if err != nil {
		return nil, err
	}
	return &Discovered{Discovery: out.Discovery, File: out.File, Capability: out.Capability,
		ContentHash: out.ContentHash, Eval: out.Eval}, nil
})

// DiscoverRequest is one discovery, compile, seal and eval run.
type DiscoverRequest struct {
	// Agent is the discovery configuration without its Surface.
	Agent agent.Config
	// Open opens a fresh surface: one for the discovery, one for the eval
	// run. The caller closes what it opens.
	Open func() (surface.Surface, error)
	// Out is the directory the sealed capability is written to; ID and
	// Version name it; ProvenanceID replaces the trace's run id (a
	// cassette's discovery names the cassette, not this run).
	Out, ID, Version, ProvenanceID string
}

// Discovered is what a [Discoverer] produced. File is empty when the
// discovery did not finish; Eval is nil when there was no eval run.
type Discovered struct {
	Discovery   *agent.Result
	File        string
	Capability  string // id@version
	ContentHash string
	// Eval is the eval run's record, already redacted.
	Eval *domain.RunRecord
}

// Discoverer explores once, compiles and seals the trace under Out and
// replays the sealed capability on the same app (the eval run): the
// pipeline, which the demo asks and never reimplements.
type Discoverer interface {
	Discover(ctx context.Context, req DiscoverRequest) (*Discovered, error)
}

// DiscovererFunc adapts a function to [Discoverer].
type DiscovererFunc func(ctx context.Context, req DiscoverRequest) (*Discovered, error)

// Discover calls f.
func (f DiscovererFunc) Discover(ctx context.Context, req DiscoverRequest) (*Discovered, error) {
	return f(ctx, req)
}

// Goal is the goal the checked-in cassette was recorded for.
const Goal = "Look up the savings balance, status and as-of date of member 12345"

// discoveredCap is the id the discovery stages compile to.
const discoveredCap = "memberdesk.savings_balance_discovered"

// discoverySteps is the discovery's step budget.
const discoverySteps = 40

// discoveryStages replays the recorded discovery of the savings-balance
// goal (offline: the cassette answers, no key, no network), compiles and
// seals the trace, and replays the compiled capability (the eval run):
// three results, each failed when an earlier one did.
func (e *env) discoveryStages(ctx context.Context) []*Result {
	disc := &Result{Stage: Stage{Name: "discovery from the cassette (no key)", Capability: discoveredCap}}
	comp := &Result{Stage: Stage{Name: "compile and seal", Capability: discoveredCap}}
	eval := &Result{Stage: Stage{Name: "eval replay of the compiled capability", Capability: discoveredCap, WantStatus: domain.StatusSuccess}}
	all := []*Result{disc, comp, eval}
	fail := func(from int, format string, args ...any) []*Result {
		for _, r := range all[from:] {
			r.fail(format, args...)
		}
		return all
	}
	out, modelID, err := e.discover(ctx)
	if err != nil {
		return fail(0, "%v", err)
	}
	d := out.Discovery
	disc.Pass = d.Status == agent.StatusFinished
	disc.Detail = fmt.Sprintf("%s after %d steps, %d tokens (%s)", d.Status, d.Steps, d.Tokens, modelID)
	if !disc.Pass {
		disc.Problem = disc.Detail + ": " + d.Reason
		return fail(1, "discovery did not finish")
	}
	comp.Pass = out.File != "" && out.ContentHash != ""
	comp.Detail = fmt.Sprintf("%s %s", out.Capability, out.ContentHash)
	if !comp.Pass {
		comp.Problem = "no sealed capability"
		return fail(2, "nothing to replay")
	}
	eval.Record = out.Eval
	eval.Pass = out.Eval != nil && out.Eval.Status == domain.StatusSuccess && fmt.Sprint(out.Eval.Outputs["savings_balance"]) == "1234.56"
	switch {
	case eval.Pass:
		eval.Detail = detail(out.Eval)
	case out.Eval == nil:
		eval.fail("no eval run")
	default:
		eval.fail("eval run %s %s: %s", out.Eval.Status, out.Eval.FailureCode, out.Eval.Message)
	}
	return all
}

// discover resets the app and asks the Discoverer to run the cassette's
// discovery against it; it returns the model's id too.
func (e *env) discover(ctx context.Context) (*Discovered, string, error) {
	if err := e.app.Reset(ctx); err != nil {
		return nil, "", fmt.Errorf("reset mock app: %w", err)
	}
	red := e.cfg.Redactor
	m, err := cassette.Open(e.cfg.Cassette, cassette.WithRedact(red.String))
	if err != nil {
		return nil, "", err
	}
	out, err := e.cfg.Discoverer.Discover(ctx, DiscoverRequest{
		Agent: agent.Config{
			Model: m, Goal: Goal, BaseURL: e.base,
			Secrets: demoSecrets(), SecretNames: []string{"corebank_operator", "corebank_password"},
			Redactor: red, DataDir: e.cfg.DataDir, RunID: e.cfg.RunID(), Autonomy: agent.LevelAuto,
			Budget: agent.Budget{MaxSteps: discoverySteps, Deadline: 5 * time.Minute}, Logger: e.cfg.Logger,
		},
		Open:         func() (surface.Surface, error) { return e.br.NewSession(ctx) },
		Out:          filepath.Join(e.cfg.DataDir, "discovered"),
		ID:           discoveredCap,
		Version:      "1.0.0",
		ProvenanceID: "cassette-demo",
	})
	if err != nil {
		return nil, "", err
	}
	return out, m.ID(), nil
}
