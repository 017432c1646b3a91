// Package pipeline builds the runs cua makes in one place, for every front
// end (the CLI, the demo, later the console, workers and the MCP server):
//
//   - [Run] is the discovery pipeline: explore once with the agent, compile
//     the trace with the recorder, write the capability file atomically,
//     seal it, load it back and replay it on the same application (the eval
//     run).
//   - [Replay] is one replay of a sealed capability: inputs and called
//     capabilities are checked before a surface opens, and the record it
//     returns is redacted.
//
// It owns the order of those steps, what a run that stops early leaves on
// disk, and the exit code a result stands for ([Result.ExitCode]).
//
// It never prints, never reads flags, the environment or a terminal, never
// chooses or builds a model or a surface adapter (callers pass a model in
// agent.Config and open surfaces through an [Opener]), and never decides
// whether an action is allowed (policy does, inside the agent and replay).
package pipeline

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/fsx"
	"github.com/cuahq/cua/internal/recorder"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface"
)

// Opener opens a fresh surface session on the application (a new browser
// context, a new state-contract session). Each call returns a session the
// caller closes; the pipeline opens one for discovery and one for the eval.
type Opener func(ctx context.Context) (surface.Surface, error)

// Params is one discovery, compile and eval run.
type Params struct {
	// Agent is the discovery configuration without its Surface. Its
	// BaseURL, Secrets, Redactor, DataDir and Logger serve the eval too.
	Agent agent.Config
	Open  Opener
	// Out is the directory the capability file is written to
	// (<id>@<version>.yaml); it is created when missing.
	Out         string
	ID, Version string
	// ProvenanceID replaces the discovery's run id in the compiled
	// capability (see [CassetteProvenance]).
	ProvenanceID string
	// CompiledAt stamps the capability; nil stamps no time.
	CompiledAt func() time.Time
	// LibraryDir holds the capabilities the eval may call (default Out).
	LibraryDir string
	// Eval replays the sealed capability once it is written.
	Eval bool
	// BeforeEval, when set, is called with the sealed capability just
	// before its eval replay starts (discover warns there when it has
	// irreversible steps).
	BeforeEval func(*capability.Loaded)
	// NewRunID names the eval run (default [NewRunID]).
	NewRunID func() string
}

// Result is what one pipeline run produced. A discovery that did not end
// finished (or with a declared outcome) has no File: nothing was written.
type Result struct {
	Discovery   *agent.Result `json:"discovery"`
	File        string        `json:"file,omitempty"`
	Capability  string        `json:"capability,omitempty"`
	ContentHash string        `json:"content_hash,omitempty"`
	ReviewNotes []string      `json:"review_notes,omitempty"`
	// Eval is the eval run's record, messages redacted; nil without Eval.
	Eval       *domain.RunRecord `json:"eval,omitempty"`
	EvalInputs map[string]string `json:"eval_inputs,omitempty"`
}

// ExitCode is the process exit code the result stands for (DESIGN's
// results table): 2 (needs a human) when discovery wrote no capability,
// the eval run's own code when there was one, else 0.
func (r *Result) ExitCode() int {
	switch {
	case r.File == "":
		return 2
	case r.Eval != nil:
		return r.Eval.ExitCode
	}
	return 0
}

// Run explores once, compiles and seals the trace into p.Out, and, with
// p.Eval, replays the sealed capability on a fresh session of the same
// application.
//
// What is left on disk: nothing when discovery did not finish; the sealed
// file <Out>/<id>@<version>.yaml once it is written, also when the eval
// run then fails (the file is the reviewer's to judge; Result.Eval says
// why the eval failed). The error is non-nil only when a stage could not
// run at all (no surface, an unwritable directory, a trace that does not
// compile); a failed eval is a result, not an error.
func Run(ctx context.Context, p Params) (*Result, error) {
	sess, err := p.Open(ctx)
	if err != nil {
		return nil, err
	}
	cfg := p.Agent
	cfg.Surface = sess
	res, err := agent.Run(ctx, cfg)
	sess.Close()
	if err != nil {
		return nil, err
	}
	out := &Result{Discovery: res}
	if res.Status != agent.StatusFinished && res.Status != agent.StatusOutcome {
		return out, nil
	}
	loaded, err := write(p, res.Trace, res.FinalScreen, out)
	if err != nil || !p.Eval {
		return out, err
	}
	out.EvalInputs = map[string]string{}
	for literal, name := range res.Trace.Inputs {
		out.EvalInputs[name] = literal
	}
	if p.BeforeEval != nil {
		p.BeforeEval(loaded)
	}
	out.Eval, err = eval(ctx, p, loaded, out.EvalInputs)
	return out, err
}

// write compiles trace (with the screen discovery ended on, from which
// the recorder may propose a reentry), writes and seals the file (pinning
// the capabilities it calls as found in the library directory), and
// loads it back.
func write(p Params, trace *domain.Trace, final *domain.UiSnapshot, out *Result) (*capability.Loaded, error) {
	trace.RunID = p.ProvenanceID
	comp, err := recorder.Compile(trace, recorder.Options{ID: p.ID, Version: p.Version, Now: p.CompiledAt, FinalScreen: final})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	text, err := recorder.Marshal(comp.Capability, comp.Notes)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := os.MkdirAll(p.Out, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	file := filepath.Join(p.Out, comp.Capability.ID+"@"+comp.Capability.Version+".yaml")
	if err := capability.WriteFileAtomic(file, text); err != nil {
		return nil, fmt.Errorf("write capability: %w", err)
	}
	hash, err := SealPinned(file, libraryDir(p))
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	out.File, out.Capability, out.ContentHash, out.ReviewNotes = file, comp.Capability.Ref(), hash, comp.Notes
	if !p.Eval {
		return nil, nil
	}
	return capability.Load(file)
}

// libraryDir holds the capabilities a compiled capability may call: the
// ones seal pins and the eval runs.
func libraryDir(p Params) string {
	if p.LibraryDir != "" {
		return p.LibraryDir
	}
	return p.Out
}

// eval replays loaded on a fresh session with the discovery's literals as
// inputs.
func eval(ctx context.Context, p Params, loaded *capability.Loaded, inputs map[string]string) (*domain.RunRecord, error) {
	lib, err := replay.LoadDir(libraryDir(p))
	if err != nil {
		return nil, err
	}
	// The eval runs loaded itself; a library file with the same id@version
	// only matters to capabilities it calls, so a duplicate is not fatal.
	_ = lib.Add(loaded)
	sess, err := p.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	newID := p.NewRunID
	if newID == nil {
		newID = NewRunID
	}
	cfg := p.Agent
	rec, err := replay.Run(ctx, replay.Options{Capability: loaded, Library: lib, Inputs: inputs, BaseURL: cfg.BaseURL,
		Surface: sess, Secrets: cfg.Secrets, Redactor: cfg.Redactor, DataDir: cfg.DataDir, RunID: newID(), Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return rec, nil // replay.Run returns it redacted
}

// CassetteProvenance is the provenance id of an exploration replayed from
// the cassette file at path: "cassette-" and 12 hex digits of its sha256.
// A replayed exploration is reproducible, so the capability names the
// cassette by content instead of the run (whose evidence still goes to the
// run's own directory).
func CassetteProvenance(path string) (string, error) {
	raw, err := fsx.ReadFile(path, fsx.MaxCassette)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return "cassette-" + hex.EncodeToString(sum[:6]), nil
}

// NewRunID returns a fresh run id: "r", the UTC time to the second and 8
// random hex digits.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "r" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
