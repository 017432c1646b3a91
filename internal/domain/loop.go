package domain

import (
	"strconv"
	"strings"
)

// TypeArray is the type of a list input: a JSON array of strings or of
// objects (see [ListSpec]), bounded by max_items. A list input is walked by
// a step's for_each; it is never typed or matched whole.
const TypeArray ValueType = "array"

// MaxListItems is the largest max_items a list input may declare.
const MaxListItems = 100

// ListSpec is what a list input (type: array) adds to its InputSpec: the
// type of its items and how many it may hold. An output of type array
// collects, in order, one value per iteration of the loop whose extract
// step fills it; it uses none of these fields.
type ListSpec struct {
	// Items is the type of each element.
	Items *ItemSpec `json:"items,omitempty"`
	// MaxItems bounds the list (1..MaxListItems); required on a list input.
	MaxItems *int `json:"max_items,omitempty"`
	// MinItems, when set, is the fewest elements a caller may pass.
	MinItems *int `json:"min_items,omitempty"`
}

// ItemSpec is the type of a list's elements: strings, or objects whose
// fields are declared by Properties (each a string-valued InputSpec:
// string, integer, number, money, date, enum or boolean, given as a JSON
// string or number).
type ItemSpec struct {
	Type       ValueType   `json:"type"`
	Properties []InputSpec `json:"properties,omitempty"`
}

// Property returns the declared field of an object item, or nil.
func (s *ItemSpec) Property(name string) *InputSpec {
	if s == nil {
		return nil
	}
	for i := range s.Properties {
		if s.Properties[i].Name == name {
			return &s.Properties[i]
		}
	}
	return nil
}

// ForEach makes a step a bounded loop: its Steps run once per element of
// the list input Input, in order, each iteration's targets, predicates and
// values bound to the element (named As: {item} for a string element,
// {item.FIELD} for a field of an object element, $item in a value). Loops
// do not nest. A run expands the loop into one step per inner step and
// iteration, with the id LOOP[N].INNER (N from 0): records, evidence,
// effects and checkpoints are per iteration.
type ForEach struct {
	Input string `json:"input"`
	As    string `json:"as"`
	Steps []Step `json:"steps"`
}

// IterationStepID is the id of inner step inner of loop in iteration n
// (0-based): "loop[n].inner".
func IterationStepID(loop string, n int, inner string) string {
	return loop + "[" + strconv.Itoa(n) + "]." + inner
}

// LoopStepID is the id an output's source names for an inner step of a
// loop: "loop.inner".
func LoopStepID(loop, inner string) string { return loop + "." + inner }

// SplitIterationStepID splits "loop[n].inner" into its parts; ok is false
// for any other id.
func SplitIterationStepID(id string) (loop string, n int, inner string, ok bool) {
	open := strings.IndexByte(id, '[')
	end := strings.Index(id, "].")
	if open <= 0 || end < open {
		return "", 0, "", false
	}
	n, err := strconv.Atoi(id[open+1 : end])
	if err != nil || n < 0 {
		return "", 0, "", false
	}
	return id[:open], n, id[end+2:], true
}

// HasLoops reports whether any step of c is a for_each loop.
func (c *Capability) HasLoops() bool {
	for i := range c.Steps {
		if c.Steps[i].ForEach != nil {
			return true
		}
	}
	return false
}

// StepCount is the most steps one pass of c's step list runs: a loop counts
// its inner steps times its list's max_items (a list with no bound counts
// MaxListItems).
func (c *Capability) StepCount() int {
	n := 0
	for i := range c.Steps {
		fe := c.Steps[i].ForEach
		if fe == nil {
			n++
			continue
		}
		bound := MaxListItems
		if in := c.Input(fe.Input); in != nil && in.MaxItems != nil {
			bound = *in.MaxItems
		}
		n += bound * len(fe.Steps)
	}
	return n
}
