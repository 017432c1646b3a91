package record

import (
	"errors"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/targeting"
)

// Demonstration is what a recording compiles from: the main pass as a
// trace (the recorder's input), every outcome marked, the types the
// person chose for outputs, and each branch's eval.
type Demonstration struct {
	Trace *domain.Trace
	// Outcomes are the outcomes marked, in order; Trace.Outcome is the
	// first.
	Outcomes []domain.Outcome
	// OutputTypes maps output names to the type the person chose.
	OutputTypes map[string]string
	// Inputs are the main pass's eval inputs (name → value typed).
	Inputs map[string]string
	// Branches are the other passes that end in an outcome.
	Branches []Branch
}

// Branch is one pass after the main one: the inputs it typed (mapped to
// the main pass's inputs by the field they were typed into) and the
// outcome it showed.
type Branch struct {
	Pass    int
	Inputs  map[string]string
	Outcome string
}

// ErrNothingRecorded is returned when the main pass has no step.
var ErrNothingRecorded = errors.New("record: nothing was demonstrated: act on the live picture, then stop")

// Demonstration builds what the recording compiles from.
func (r *Recording) Demonstration() (*Demonstration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
	t := &domain.Trace{Goal: r.goal, BaseURL: r.baseURL, Surface: r.surface, Model: "human", Inputs: map[string]string{},
		Finished: true}
	d := &Demonstration{Trace: t, OutputTypes: map[string]string{}, Inputs: map[string]string{}}
	fieldInput := map[string]string{} // target description → input name
	for i, e := range r.events {
		if e.pass != 0 || e.step == nil {
			continue
		}
		if ts, ok := r.traceStep(i, len(t.Steps)); ok {
			if name := r.inputs[ts.Literal]; ts.Literal != "" && name != "" {
				t.Inputs[ts.Literal] = name
				d.Inputs[name] = ts.Literal
				fieldInput[e.step.desc] = name
			}
			t.Steps = append(t.Steps, ts)
		}
	}
	for _, m := range r.marks {
		switch {
		case m.kind == "output":
			t.Steps = append(t.Steps, extractStep(m, len(t.Steps)))
			d.OutputTypes[m.name] = m.typ
		case m.kind == "checkpoint" && m.pass == 0:
			desc, _ := targeting.Synthesize(m.snap, m.node)
			desc.Hints = nil
			t.Checkpoint = &domain.Predicate{NodeExists: &desc}
		case m.kind == "outcome":
			d.Outcomes = append(d.Outcomes, outcomeOf(m))
			if m.pass > 0 {
				d.Branches = append(d.Branches, r.branch(m, fieldInput, d.Inputs))
			}
		}
	}
	if len(t.Steps) == 0 {
		return nil, ErrNothingRecorded
	}
	if len(d.Outcomes) > 0 {
		o := d.Outcomes[0]
		t.Outcome = &o
	}
	return d, nil
}

// traceStep makes the trace step of event i (the n-th step).
func (r *Recording) traceStep(i, n int) (domain.TraceStep, bool) {
	e := r.events[i]
	p := e.step
	if p.kind == "click" && r.focusOnly(i) {
		return domain.TraceStep{}, false
	}
	node := e.snap.Nodes[p.node]
	node.Value = "" // a field's value before the step is no part of it
	tgt := p.target
	ts := domain.TraceStep{Index: n, Target: &tgt, Node: &node, Verdict: "ok", URLBefore: e.snap.URL,
		Action: domain.Action{StepID: "record", Target: &tgt, Actor: domain.ActorHuman, Risk: p.risk}}
	after := r.after(i)
	switch p.kind {
	case "click":
		ts.Action.Type = domain.ActClick
	case "key":
		ts.Action.Type, ts.Action.Key = domain.ActPressKey, p.key
	case "type":
		ts.Action.Type = domain.ActType
		if p.secret != "" {
			ts.Action.Value = &domain.ValueExpr{Secret: p.secret}
		} else {
			ts.Literal = string(p.text)
			ts.Action.Value = domain.Lit(ts.Literal)
		}
	case "select":
		ts.Action.Type = domain.ActSelect
		if after == nil {
			return domain.TraceStep{}, false
		}
		res, err := targeting.Resolve(after, tgt)
		if err != nil {
			return domain.TraceStep{}, false
		}
		ts.Literal = after.Nodes[res.Node].Value
		ts.Action.Value = domain.Lit(ts.Literal)
	}
	if after != nil && (p.kind == "click" || p.kind == "key") {
		ts.Postcondition = newHeading(e.snap, after, r.inputs)
	}
	return ts, true
}

// focusOnly reports whether the click of event i only put the focus in a
// field the next step of its pass types into.
func (r *Recording) focusOnly(i int) bool {
	p := r.events[i].step
	for _, e := range r.events[i+1:] {
		if e.pass != r.events[i].pass || e.step == nil {
			continue
		}
		return (e.step.kind == "type" || e.step.kind == "select") && e.step.desc == p.desc
	}
	return false
}

// after is the first snapshot taken after event i: the next gesture's or
// mark's, or the final screen.
func (r *Recording) after(i int) *domain.UiSnapshot {
	if i+1 < len(r.events) {
		return r.events[i+1].snap
	}
	return nil
}

// branch maps the values a branch typed to inputs, by the field the main
// pass typed each input into; inputs it did not type keep the main
// pass's values.
func (r *Recording) branch(m mark, fieldInput, main map[string]string) Branch {
	b := Branch{Pass: m.pass, Outcome: m.name, Inputs: map[string]string{}}
	for k, v := range main {
		b.Inputs[k] = v
	}
	for _, e := range r.events {
		if e.pass == m.pass && e.step != nil && e.step.kind == "type" && e.step.secret == "" {
			if name := fieldInput[e.step.desc]; name != "" {
				b.Inputs[name] = string(e.step.text)
			}
		}
	}
	return b
}

// extractStep is the extraction of a marked output: a value-independent
// descriptor where the node has an anchor.
func extractStep(m mark, n int) domain.TraceStep {
	desc, _, _ := targeting.SynthesizeForRead(m.snap, m.node)
	node := m.snap.Nodes[m.node]
	text := ""
	if res, err := targeting.Resolve(m.snap, desc); err == nil {
		text = targeting.ExtractText(m.snap, res)
	}
	return domain.TraceStep{Index: n, Target: &desc, Node: &node, Into: m.name, Extracted: text, Verdict: "ok",
		URLBefore: m.snap.URL,
		Action:    domain.Action{Type: domain.ActExtract, StepID: "record", Target: &desc, Actor: domain.ActorHuman}}
}

// outcomeOf is a marked outcome: the text the marked node shows is
// present (in its frame).
func outcomeOf(m mark) domain.Outcome {
	q := &domain.TextQuery{Text: outcomeText(m.snap, m.node), Frame: m.snap.Nodes[m.node].Frame}
	return domain.Outcome{Code: m.name, Description: "Marked by the person who recorded it.",
		When: domain.Predicate{TextPresent: q}}
}

// newHeading is a node_exists predicate on a heading that appeared between
// before and after, preferring one that names an input's value (an
// identity check the recorder turns into {input.NAME}).
func newHeading(before, after *domain.UiSnapshot, inputs map[string]string) *domain.Predicate {
	seen := map[string]bool{}
	for _, n := range before.Nodes {
		if n.Role == "heading" {
			seen[n.Frame+"\x00"+perception.Fold(n.Name)] = true
		}
	}
	var found []domain.Node
	for _, n := range after.Nodes {
		if n.Role == "heading" && n.Name != "" && !seen[n.Frame+"\x00"+perception.Fold(n.Name)] {
			found = append(found, n)
		}
	}
	if len(found) == 0 {
		return nil
	}
	pick := found[0]
	for _, n := range found {
		for v := range inputs {
			if v != "" && strings.Contains(n.Name, v) {
				pick = n
			}
		}
	}
	d := domain.TargetDescriptor{Role: "heading", Name: &domain.NameMatch{Value: pick.Name, Match: domain.MatchExact}}
	if pick.Frame != "" {
		d.Scope = &domain.Scope{Frame: pick.Frame}
	}
	return &domain.Predicate{NodeExists: &d}
}
