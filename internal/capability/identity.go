package capability

import (
	"fmt"

	"github.com/cuahq/cua/internal/domain"
)

// UnarmedRead is an output a capability reads from a screen that shows a
// record without checking that the record is the one asked for
// (DESIGN invariant 23).
type UnarmedRead struct {
	// Step is the extract step that reads the output.
	Step string `json:"step"`
	// Output is the output it fills.
	Output string `json:"output"`
	// Path is the step's field path ("steps[4]").
	Path string `json:"path"`
	ptr  string
}

func (u UnarmedRead) String() string {
	return fmt.Sprintf("%s: step %q reads output %q with no identity check", u.Path, u.Step, u.Output)
}

// UnarmedReads returns the outputs c reads with no check that the screen
// shows the record asked for. A capability asks for a record when it has an
// input that is not sensitive (a member number, an account); it reads one
// when an output's source is an extract step. A read is armed when a
// predicate that can hold only on a screen matching an input ({input.NAME}
// or {$input: NAME}, see [ChecksIdentity]) is the checkpoint's, or is a
// pre- or postcondition or wait of the reading step or of the steps before
// it back to the last action that changed the screen (the extracts before
// it and the click, type or navigation that brought the record). A check
// made before that action proves nothing about the screen it brought.
//
// It returns nil for a capability that declares identity: unarmed (the
// caller reports that declaration instead, see [IdentityUnarmed]), and for
// one with no such input or no output read by an extract step. A read
// inside a for_each loop is judged on the loop's inner steps (its path
// names the inner step); a check on the iteration's element ({item}) does
// not arm it.
func UnarmedReads(c *domain.Capability) []UnarmedRead {
	if c == nil || c.Identity != nil || !asksForRecord(c) {
		return nil
	}
	c, remap := loopPrototype(c)
	if remap == nil {
		remap = func(ptr string) string { return ptr }
	}
	if c.Checkpoint != nil && requiresInput(&c.Checkpoint.When) {
		return nil
	}
	step := map[string]int{}
	for i := range c.Steps {
		step[c.Steps[i].ID] = i
	}
	var out []UnarmedRead
	for _, o := range c.Outputs {
		i, ok := step[o.Source.Step]
		if !ok || c.Steps[i].Action != domain.ActExtract {
			continue
		}
		if !readArmed(c, i) {
			ptr := remap(pointer("steps", i))
			out = append(out, UnarmedRead{Step: c.Steps[i].ID, Output: o.Name, Path: displayPath(ptr), ptr: ptr})
		}
	}
	return out
}

// IdentityUnarmed returns the reason c gives for reading without an
// identity check, or "" when it declares none.
func IdentityUnarmed(c *domain.Capability) string {
	if c == nil || c.Identity == nil {
		return ""
	}
	return c.Identity.Unarmed
}

// asksForRecord reports whether c has an input that is not sensitive: a
// value that names the record the caller wants.
func asksForRecord(c *domain.Capability) bool {
	for _, in := range c.Inputs {
		if !in.Sensitive {
			return true
		}
	}
	return false
}

// readArmed reports whether the extract at steps[at] is preceded, on the
// screen it reads, by a predicate that requires an input: one of the
// reading step's own, or one of the steps before it back to and including
// the last step that is not an extract.
func readArmed(c *domain.Capability, at int) bool {
	for i := at; i >= 0; i-- {
		s := &c.Steps[i]
		if requiresInput(s.Precondition) || requiresInput(s.Postcondition) || (s.Wait != nil && requiresInput(s.Wait.Until)) {
			return true
		}
		if s.Action != domain.ActExtract {
			return false
		}
	}
	return false
}

// Lint returns what a person should fix in l before approving it although
// it is valid: each unarmed read (see [UnarmedReads]) as a problem at its
// reading step, with the file's line, then each irreversible write no
// effect contract covers (see [ScreenOnlyWrites]) at its last step.
func (l *Loaded) Lint() []Problem {
	var out []Problem
	for _, u := range UnarmedReads(l.Capability) {
		line := 0
		if l.doc != nil {
			line = l.doc.line(u.ptr)
		}
		out = append(out, Problem{File: l.File, Line: line, Path: u.Path, Message: fmt.Sprintf(
			"step %q reads output %q from a screen showing a record with no check that it is the record asked for: "+
				"add a predicate with {input.NAME} to this step's or the preceding action's postcondition, or to the checkpoint, "+
				"or declare identity: {unarmed: REASON}", u.Step, u.Output)})
	}
	return append(out, l.screenOnlyLint()...)
}
