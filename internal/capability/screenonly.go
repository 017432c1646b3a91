package capability

import (
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// ScreenOnlyWrite is a run of consecutive irreversible steps (a submit and
// the confirm dialog after it, say) none of which declares an effect
// contract: the write it makes is proven only by the screen that follows,
// which a lost, partial or duplicated write does not change (issue 26).
type ScreenOnlyWrite struct {
	// Steps are the ids of the irreversible steps, in order.
	Steps []string `json:"steps"`
	// Path is the last step's field path ("steps[7]"), where a contract
	// would go.
	Path string `json:"path"`
	ptr  string
}

func (w ScreenOnlyWrite) String() string {
	return fmt.Sprintf("%s: irreversible %s with no effect contract", w.Path, stepList(w.Steps))
}

// stepList names steps as `step "a"` or `steps "a", "b"`.
func stepList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	if len(q) == 1 {
		return "step " + q[0]
	}
	return "steps " + strings.Join(q, ", ")
}

// ScreenOnlyWrites returns the writes of c that no effect contract covers.
// Consecutive irreversible steps are one write: a contract on any of them
// (the reference transfer's is on its confirm step, after the gated
// submit) covers them all. The steps of a for_each body are held to the
// same rule within the body.
func ScreenOnlyWrites(c *domain.Capability) []ScreenOnlyWrite {
	if c == nil {
		return nil
	}
	return screenOnlyIn(c.Steps, "/steps")
}

// screenOnlyIn checks steps, whose JSON pointer is at.
func screenOnlyIn(steps []domain.Step, at string) []ScreenOnlyWrite {
	var out []ScreenOnlyWrite
	var run []string
	covered, last := false, ""
	flush := func() {
		if len(run) > 0 && !covered {
			out = append(out, ScreenOnlyWrite{Steps: run, Path: displayPath(last), ptr: last})
		}
		run, covered = nil, false
	}
	for i := range steps {
		s := &steps[i]
		ptr := at + pointer(i)
		if s.ForEach != nil {
			flush()
			out = append(out, screenOnlyIn(s.ForEach.Steps, ptr+"/for_each/steps")...)
			continue
		}
		if s.Risk != domain.RiskIrreversible {
			flush()
			continue
		}
		run, last = append(run, s.ID), ptr
		covered = covered || len(s.Effects) > 0
	}
	flush()
	return out
}

// screenOnlyLint returns a lint problem for each of l's screen-only writes.
func (l *Loaded) screenOnlyLint() []Problem {
	var out []Problem
	for _, w := range ScreenOnlyWrites(l.Capability) {
		line := 0
		if l.doc != nil {
			line = l.doc.line(w.ptr)
		}
		out = append(out, Problem{File: l.File, Line: line, Path: w.Path, Message: fmt.Sprintf(
			"irreversible %s declares no effect contract: only the screen after it says the write landed; "+
				"add effects: [{record_written: {via: READ_BACK@VERSION, match: {...}, count: 1}}] to a step of this write, "+
				"or have the approver accept it with cua catalog approve --accept-screen-only REASON", stepList(w.Steps))})
	}
	return out
}
