// Package report renders what runs produce for people: a run record's
// summary, a discovery pipeline's result and a capability file's check, as
// the CLI prints them (and the demo, the console or a worker log may).
//
// It owns the layout of that text and the shape of a file check; it never
// runs, loads a model or opens a surface, and writes only to the writer it
// is given. Everything it prints comes from records the engines already
// redacted.
package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/pipeline"
)

// Facts writes what a run ended with, one indented line each: effects
// first (invariant 13), outcome, failure and outputs by name. Summary and
// cua submit --wait print a run's result through it.
func Facts(w io.Writer, eff *domain.Effects, outcome string, code domain.FailureCode, message string, outputs map[string]any) {
	if eff != nil {
		for _, se := range eff.Steps {
			fmt.Fprintf(w, "  effect       %s (%s): %s\n", se.Step, se.Risk, se.Effect)
		}
	}
	if outcome != "" {
		fmt.Fprintf(w, "  outcome      %s\n", outcome)
	}
	if code != "" {
		fmt.Fprintf(w, "  failure      %s: %s\n", code, message)
	}
	keys := make([]string, 0, len(outputs))
	for k := range outputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  output       %s = %v\n", k, outputs[k])
	}
}

// drift says what the drift score means: the share of resolved targets
// found on a weaker rung than the one recorded (the screen differs from
// the recording; every step's checks still held on a SUCCESS).
func drift(rec *domain.RunRecord) string {
	if rec.DriftScore == 0 {
		return "0.00 (every target found on its recorded rung)"
	}
	resolved, drifted := 0, 0
	for _, st := range rec.Steps {
		if st.Strategy != "" {
			resolved++
		}
		if st.Drifted {
			drifted++
		}
	}
	if resolved == 0 || drifted == 0 {
		return fmt.Sprintf("%.2f of the targets found on a weaker rung than recorded (see rungs)", rec.DriftScore)
	}
	return fmt.Sprintf("%.2f (%d of %d targets found on a weaker rung than recorded; see rungs)", rec.DriftScore, drifted, resolved)
}

// Summary writes rec as a status line and one indented line per fact:
// effects first (invariant 13), outcome, failure, outputs by name, steps,
// rungs, drift, duration and run id.
func Summary(w io.Writer, rec *domain.RunRecord) {
	fmt.Fprintf(w, "%s  %s\n", rec.Status, rec.Capability)
	Facts(w, rec.Effects, rec.Outcome, rec.FailureCode, rec.Message, rec.Outputs)
	mix := make([]string, 0, len(rec.StrategyMix))
	for s, n := range rec.StrategyMix {
		mix = append(mix, fmt.Sprintf("%s×%d", s, n))
	}
	sort.Strings(mix)
	fmt.Fprintf(w, "  steps        %d (dispatches %d, recoveries %d)\n", len(rec.Steps), rec.DispatchCount, rec.RecoveryAttempts)
	fmt.Fprintf(w, "  rungs        %s\n", strings.Join(mix, " "))
	fmt.Fprintf(w, "  drift        %s\n", drift(rec))
	fmt.Fprintf(w, "  duration     %d ms\n", rec.DurationMS)
	fmt.Fprintf(w, "  run          %s\n", rec.RunID)
}

// Discovery writes a pipeline result: the discovery's end and cost, the
// compiled and sealed file with its review notes, and the eval run.
func Discovery(w io.Writer, r *pipeline.Result) {
	d := r.Discovery
	fmt.Fprintf(w, "discovery  %s after %d steps, %d tokens", d.Status, d.Steps, d.Tokens)
	if d.Priced {
		fmt.Fprintf(w, ", $%.4f", d.Cost)
	}
	fmt.Fprintln(w)
	if d.Reason != "" {
		fmt.Fprintf(w, "  reason     %s\n", d.Reason)
	}
	if r.File != "" {
		fmt.Fprintf(w, "compiled   %s  %s\n  sealed     %s\n", r.Capability, r.File, r.ContentHash)
		for _, n := range r.ReviewNotes {
			fmt.Fprintf(w, "  review     %s\n", n)
		}
	}
	if r.Eval != nil {
		fmt.Fprintf(w, "eval run   ")
		Summary(w, r.Eval)
	}
}

// Trim shortens s to n runes, ending it with "…" when cut.
func Trim(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// FileCheck is the check of one capability file.
type FileCheck struct {
	File        string               `json:"file"`
	Valid       bool                 `json:"valid"`
	ID          string               `json:"id,omitempty"`
	Version     string               `json:"version,omitempty"`
	ContentHash string               `json:"content_hash,omitempty"`
	Sealed      bool                 `json:"sealed"`
	Error       string               `json:"error,omitempty"`
	Problems    []capability.Problem `json:"problems,omitempty"`
	// Lint lists what a valid file should still fix (an unarmed read, see
	// capability.UnarmedReads); cua capability lint fails on it.
	Lint []capability.Problem `json:"lint,omitempty"`
	// IdentityUnarmed is the reason a valid file gives for reading without
	// an identity check (identity: unarmed).
	IdentityUnarmed string `json:"identity_unarmed,omitempty"`
}

// Check loads file and reports it: valid with its id, version, hash and
// seal, or invalid with the error and its problems (schema and semantic
// problems with line and path; a sealed file whose content changed as one
// content_hash problem naming the declared and computed hashes).
func Check(ctx context.Context, file string) FileCheck {
	r := FileCheck{File: file}
	l, err := capability.LoadContext(ctx, file)
	if err != nil {
		r.Error = err.Error()
		var inv *capability.InvalidError
		if errors.As(err, &inv) {
			r.Problems = inv.Problems
		}
		var mm *capability.HashMismatchError
		if errors.As(err, &mm) {
			r.Sealed, r.ContentHash = true, mm.Computed
			r.Problems = []capability.Problem{{File: file, Path: "content_hash", Message: fmt.Sprintf("content hash mismatch for %s: declared %s, computed %s", mm.Ref, mm.Declared, mm.Computed)}}
		}
		return r
	}
	r.Valid = true
	r.ID, r.Version, r.ContentHash, r.Sealed = l.Capability.ID, l.Capability.Version, l.Hash, l.Sealed
	r.Lint, r.IdentityUnarmed = l.Lint(), capability.IdentityUnarmed(l.Capability)
	return r
}

// LintLines are the lines cua capability lint prints for a check: Line,
// then one indented line per lint problem, or a note of a declared
// unarmed read.
func (r FileCheck) LintLines() []string {
	lines := []string{r.Line()}
	if !r.Valid {
		return lines
	}
	if len(r.Lint) > 0 {
		lines[0] = fmt.Sprintf("LINT %s  %s@%s  %d lint problem(s)", r.File, r.ID, r.Version, len(r.Lint))
	}
	for _, p := range r.Lint {
		lines = append(lines, "  lint: "+p.String())
	}
	if r.IdentityUnarmed != "" {
		lines = append(lines, "  identity unarmed (declared): "+r.IdentityUnarmed)
	}
	return lines
}

// Line is the one-line text of a check: "ok   FILE  ID@VERSION  STATE" for
// a valid file, "FAIL ERROR" for an invalid one.
func (r FileCheck) Line() string {
	if !r.Valid {
		return "FAIL " + r.Error
	}
	state := "draft (unsealed)"
	if r.Sealed {
		state = "sealed " + r.ContentHash
	}
	return fmt.Sprintf("ok   %s  %s@%s  %s", r.File, r.ID, r.Version, state)
}

// Step is one discovery step as a progress line: number, action, target,
// verdict, tokens and any notice. The caller redacts it.
func Step(r agent.StepReport) string {
	line := fmt.Sprintf("step %2d  %-9s %-40s %-12s %5d tokens", r.Step, r.Action, Trim(r.Target, 40), r.Verdict, r.Tokens)
	if r.Notice != "" {
		line += "  (" + Trim(r.Notice, 80) + ")"
	}
	return line
}
