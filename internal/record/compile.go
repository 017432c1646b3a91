package record

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/recorder"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface"
)

// Opener opens a fresh surface session on the application: one for the
// demonstration, one per eval run.
type Opener func(ctx context.Context) (surface.Surface, error)

// Result is what Stop produced.
type Result struct {
	File        string   `json:"file"`
	Capability  string   `json:"capability"`
	ContentHash string   `json:"content_hash"`
	ReviewNotes []string `json:"review_notes,omitempty"`
	// Eval is the main pass's eval run; Branches each branch's.
	Eval     *domain.RunRecord `json:"eval,omitempty"`
	Branches []BranchEval      `json:"branches,omitempty"`
}

// BranchEval is one branch's eval run and the outcome it should end in.
type BranchEval struct {
	Want   string            `json:"want_outcome"`
	Inputs map[string]string `json:"inputs"`
	Eval   *domain.RunRecord `json:"eval"`
}

// Passed reports whether every eval ended as demonstrated: the main pass
// SUCCESS, each branch BUSINESS_OUTCOME with its outcome.
func (r *Result) Passed() bool {
	if r.Eval == nil || r.Eval.Status != domain.StatusSuccess {
		return false
	}
	for _, b := range r.Branches {
		if b.Eval == nil || b.Eval.Status != domain.StatusBusinessOutcome || b.Eval.Outcome != b.Want {
			return false
		}
	}
	return true
}

// ExitCode is the main eval's exit code, or 1 when a branch did not end
// in its outcome.
func (r *Result) ExitCode() int {
	if r.Eval != nil && r.Eval.ExitCode != 0 {
		return r.Eval.ExitCode
	}
	if !r.Passed() {
		return 1
	}
	return 0
}

// CompileOptions is what compiling a demonstration needs.
type CompileOptions struct {
	ID, Version, Out, DataDir string
	// Now stamps the capability.
	Now func() time.Time
	// Eval replays the sealed capability on sessions Open opens.
	Eval     bool
	Open     Opener
	BaseURL  string
	Secrets  runtime.SecretSource
	Redactor *redact.Redactor
	Logger   *slog.Logger
	NewRunID func() string
}

// Compile compiles d through the recorder, applies the person's output
// types and the outcomes beyond the first, writes and seals the file into
// o.Out and, with o.Eval, replays it: once with the main pass's inputs,
// once per branch with the branch's.
func Compile(ctx context.Context, d *Demonstration, o CompileOptions) (*Result, error) {
	comp, err := recorder.Compile(d.Trace, recorder.Options{ID: o.ID, Version: o.Version, Now: o.Now})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	c, notes := comp.Capability, comp.Notes
	notes = append(notes, applyTypes(c, d.OutputTypes)...)
	more, err := extraOutcomes(d, c)
	if err != nil {
		return nil, err
	}
	notes = append(notes, more...)
	c.Provenance.ReviewNotes = notes
	text, err := recorder.Marshal(c, notes)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	file := filepath.Join(o.Out, c.ID+"@"+c.Version+".yaml")
	if err := capability.WriteFileAtomic(file, text); err != nil {
		return nil, fmt.Errorf("write capability: %w", err)
	}
	hash, err := capability.Seal(file)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	res := &Result{File: file, Capability: c.Ref(), ContentHash: hash, ReviewNotes: notes}
	if !o.Eval {
		return res, nil
	}
	loaded, err := capability.Load(file)
	if err != nil {
		return res, err
	}
	if res.Eval, err = eval(ctx, o, loaded, d.Inputs); err != nil {
		return res, err
	}
	for _, b := range d.Branches {
		rec, err := eval(ctx, o, loaded, b.Inputs)
		if err != nil {
			return res, err
		}
		res.Branches = append(res.Branches, BranchEval{Want: b.Outcome, Inputs: b.Inputs, Eval: rec})
	}
	return res, nil
}

// applyTypes gives each marked output the type the person chose, with the
// transform that reads it.
func applyTypes(c *domain.Capability, types map[string]string) []string {
	var notes []string
	steps := map[string]*domain.Step{}
	for i := range c.Steps {
		steps[c.Steps[i].ID] = &c.Steps[i]
	}
	for i := range c.Outputs {
		out := &c.Outputs[i]
		typ, ok := types[out.Name]
		st := steps[out.Source.Step]
		if !ok || st == nil {
			continue
		}
		switch typ {
		case "text":
			out.Type, st.Transform = domain.TypeString, domain.Transform{}
		case "money":
			out.Type, st.Transform = domain.TypeMoney, domain.TransformMoney
		case "date":
			out.Type, st.Transform = domain.TypeDate, domain.TransformDate
		case "number":
			out.Type, st.Transform = domain.TypeNumber, domain.Transform{}
		}
		notes = append(notes, fmt.Sprintf("output %s is %s: the person who recorded it chose %s", out.Name, out.Type, typ))
	}
	return notes
}

// extraOutcomes compiles the outcomes after the first (the recorder takes
// one per trace) through the recorder too, so their conditions get the
// same identity handling, and adds them to c.
func extraOutcomes(d *Demonstration, c *domain.Capability) ([]string, error) {
	var notes []string
	for _, o := range d.Outcomes[min(1, len(d.Outcomes)):] {
		if outcomeByCode(c, o.Code) != nil {
			notes = append(notes, fmt.Sprintf("outcome %s was marked twice: the first mark is kept", o.Code))
			continue
		}
		t := *d.Trace
		t.Outcome = &o
		comp, err := recorder.Compile(&t, recorder.Options{ID: c.ID, Version: c.Version})
		if err != nil {
			return nil, fmt.Errorf("compile outcome %s: %w", o.Code, err)
		}
		if got := outcomeByCode(comp.Capability, o.Code); got != nil {
			c.Outcomes = append(c.Outcomes, *got)
			notes = append(notes, fmt.Sprintf("outcome %s was marked by the person who recorded it: check that its condition shows only that outcome", o.Code))
		}
	}
	return notes, nil
}

// eval replays loaded on a fresh session with inputs.
func eval(ctx context.Context, o CompileOptions, loaded *capability.Loaded, inputs map[string]string) (*domain.RunRecord, error) {
	lib, err := replay.LoadDir(o.Out)
	if err != nil {
		return nil, err
	}
	_ = lib.Add(loaded) // the eval runs loaded itself; a duplicate in Out is not fatal
	sess, err := o.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	id := ""
	if o.NewRunID != nil {
		id = o.NewRunID()
	}
	return replay.Run(ctx, replay.Options{Capability: loaded, Library: lib, Inputs: inputs, BaseURL: o.BaseURL,
		Surface: sess, Secrets: o.Secrets, Redactor: o.Redactor, DataDir: o.DataDir, RunID: id, Logger: o.Logger})
}

func outcomeByCode(c *domain.Capability, code string) *domain.Outcome {
	for i := range c.Outcomes {
		if c.Outcomes[i].Code == code {
			return &c.Outcomes[i]
		}
	}
	return nil
}
