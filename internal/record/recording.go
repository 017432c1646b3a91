package record

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/policy"
	"github.com/cuahq/cua/internal/targeting"
)

// Output types a person may choose when marking an output.
var OutputTypes = []string{"text", "money", "date", "number"}

// Gesture is one dispatched input as the recording needs it (the
// console's Gesture, narrowed): the snapshot it was hit-tested on, the
// node's index there, the action's kind ("click" or "key") and key.
type Gesture struct {
	Kind   string
	Key    string
	Before *domain.UiSnapshot
	Node   int
	Risk   domain.Risk
}

// Recording accumulates one demonstration. Safe for concurrent use.
type Recording struct {
	mu sync.Mutex

	goal, baseURL string
	surface       domain.Surface
	inputs        map[string]string // value → input name (--input)
	secrets       map[string]string // folded field name → secret ref (--secret)

	pass   int
	events []event
	marks  []mark
	// typed holds what was typed into secret fields, by ref: memory only,
	// for the eval run.
	typed map[string]string
	// onSecret is told each secret value once typing into its field ends.
	onSecret func(string)
}

// event is a gesture folded into a step, or a snapshot a mark was taken
// on (step nil): the snapshots in order give each step its "after".
type event struct {
	pass int
	snap *domain.UiSnapshot
	step *pending
}

// pending is a step being recorded.
type pending struct {
	kind   string // click, type, key, select
	node   int
	target domain.TargetDescriptor
	desc   string
	key    string
	text   []rune
	secret string // the secret ref a type step's value goes to
	risk   domain.Risk
}

// mark is one marking of the screen.
type mark struct {
	pass       int
	kind, name string
	typ        string
	snap       *domain.UiSnapshot
	node       int
}

// NewRecording starts an empty recording. inputs maps input names to the
// values the person will type; secrets maps field names (accessible names,
// compared case-insensitively) to secret refs.
func NewRecording(goal, baseURL string, kind domain.Surface, inputs, secrets map[string]string) *Recording {
	r := &Recording{goal: goal, baseURL: baseURL, surface: kind, inputs: map[string]string{}, secrets: map[string]string{},
		typed: map[string]string{}}
	for name, v := range inputs {
		r.inputs[v] = name
	}
	for field, ref := range secrets {
		r.secrets[perception.Fold(field)] = ref
	}
	return r
}

// OnSecret sets the function told each secret value typed (the redactor's
// RegisterLiteral), before the value is kept for the eval.
func (r *Recording) OnSecret(f func(string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onSecret = f
}

// Gesture records one dispatched gesture.
func (r *Recording) Gesture(g Gesture) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g.Before == nil || g.Node < 0 || g.Node >= len(g.Before.Nodes) {
		return errors.New("record: the gesture names no node")
	}
	if g.Kind == "click" {
		g.Node = actionable(g.Before, g.Node)
	}
	n := &g.Before.Nodes[g.Node]
	d, err := targeting.Synthesize(g.Before, g.Node)
	if err != nil {
		return fmt.Errorf("record: %s %q cannot be described uniquely: %w", n.Role, n.Name, err)
	}
	desc := targeting.Describe(d)
	last := r.last()
	switch {
	case g.Kind == "click":
		r.flush()
		r.add(g.Before, &pending{kind: "click", node: g.Node, target: d, desc: desc, risk: riskOf(g, domain.ActClick, n, g.Risk)})
	case g.Kind != "key":
		return fmt.Errorf("record: unknown gesture %q", g.Kind)
	case g.Key == "Tab":
		r.flush()
		r.add(g.Before, nil)
	case isChoice(n) && (strings.HasPrefix(g.Key, "Arrow") || utf8.RuneCountInString(g.Key) == 1):
		if last == nil || last.kind != "select" || last.desc != desc {
			r.flush()
			r.add(g.Before, &pending{kind: "select", node: g.Node, target: d, desc: desc, risk: riskOf(g, domain.ActSelect, n, "")})
		}
	case g.Key == "Backspace" && last != nil && last.kind == "type" && last.desc == desc:
		if len(last.text) > 0 {
			last.text = last.text[:len(last.text)-1]
		}
	case g.Key == "Space" || utf8.RuneCountInString(g.Key) == 1:
		ch := []rune(g.Key)
		if g.Key == "Space" {
			ch = []rune{' '}
		}
		if last == nil || last.kind != "type" || last.desc != desc {
			r.flush()
			p := &pending{kind: "type", node: g.Node, target: d, desc: desc, risk: riskOf(g, domain.ActType, n, "")}
			if n.States.Password || n.Sensitive || r.secrets[perception.Fold(n.Name)] != "" {
				p.secret = r.secretRef(n)
			}
			r.add(g.Before, p)
			last = p
		}
		last.text = append(last.text, ch...)
	default:
		r.flush()
		r.add(g.Before, &pending{kind: "key", node: g.Node, target: d, desc: desc, key: g.Key, risk: riskOf(g, domain.ActPressKey, n, g.Risk)})
	}
	return nil
}

// riskOf is the risk of the semantic action a gesture records, judged as
// discovery judges an agent's action (policy.ActionRisk), and at least
// floor (what the console judged a click or key that was sent).
func riskOf(g Gesture, t domain.ActionType, n *domain.Node, floor domain.Risk) domain.Risk {
	return domain.MaxRisk(policy.ActionRisk(g.Before, domain.Action{Type: t, Key: g.Key}, n), floor)
}

// secretRef is the ref a value typed into n goes to: the --secret naming
// the field, else the only --secret, else one named after the field.
func (r *Recording) secretRef(n *domain.Node) string {
	if ref := r.secrets[perception.Fold(n.Name)]; ref != "" {
		return ref
	}
	if len(r.secrets) == 1 {
		for _, ref := range r.secrets {
			return ref
		}
	}
	ref := strings.Trim(strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			return c
		}
		return '_'
	}, strings.ToLower(n.Name)), "_")
	if ref == "" {
		ref = "password"
	}
	return ref
}

// controls are the roles a click means to reach when it lands on text
// inside them.
var controls = []string{"link", "button", "checkbox", "radio", "menuitem", "menuitemcheckbox", "menuitemradio", "tab",
	"option", "switch", "treeitem", "textbox", "searchbox", "combobox"}

// actionable is the control a click on node i reached: i itself, or the
// nearest of its ancestors (up to 4 levels) with a control's role when i
// is text or a wrapper inside it (the text "Member Search" of a link).
func actionable(s *domain.UiSnapshot, i int) int {
	if slices.Contains(controls, s.Nodes[i].Role) {
		return i
	}
	p := s.Nodes[i].Parent
	for range 4 {
		if p < 0 || p >= len(s.Nodes) {
			break
		}
		if slices.Contains(controls, s.Nodes[p].Role) {
			return p
		}
		p = s.Nodes[p].Parent
	}
	return i
}

// named is the node a person means when a mark lands on text: the text's
// parent when it carries the same name (the heading "Member 12345", the
// cell "$1,234.56"), else node itself.
func named(s *domain.UiSnapshot, i int) int {
	n := &s.Nodes[i]
	if n.Role != "text" || n.Parent < 0 || n.Parent >= len(s.Nodes) {
		return i
	}
	if p := &s.Nodes[n.Parent]; perception.Fold(p.Name) == perception.Fold(n.Name) && p.Name != "" {
		return n.Parent
	}
	return i
}

// isChoice reports whether n picks from a list (a select).
func isChoice(n *domain.Node) bool {
	return (n.Role == "combobox" || n.Role == "listbox") && !n.States.Editable
}

func (r *Recording) last() *pending {
	if len(r.events) == 0 {
		return nil
	}
	e := r.events[len(r.events)-1]
	if e.pass != r.pass {
		return nil
	}
	return e.step
}

func (r *Recording) add(snap *domain.UiSnapshot, p *pending) {
	r.events = append(r.events, event{pass: r.pass, snap: snap, step: p})
}

// flush ends typing into a secret field: its value is told to onSecret
// and kept for the eval.
func (r *Recording) flush() {
	last := r.last()
	if last == nil || last.kind != "type" || last.secret == "" || len(last.text) == 0 {
		return
	}
	v := string(last.text)
	if r.onSecret != nil {
		r.onSecret(v)
	}
	if _, ok := r.typed[last.secret]; !ok || r.pass == 0 {
		r.typed[last.secret] = v
	}
}

// Mark records a marking of node on snap: kind is "output" (name, typ one
// of OutputTypes), "outcome" (name: its code) or "checkpoint".
func (r *Recording) Mark(kind, name, typ string, snap *domain.UiSnapshot, node int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if snap == nil || node < 0 || node >= len(snap.Nodes) {
		return errors.New("record: nothing marked: click a value on the live picture")
	}
	node = named(snap, node)
	switch kind {
	case "output":
		if !validName(name) {
			return fmt.Errorf("record: output name %q: want snake_case (a-z, 0-9, _)", name)
		}
		if !slices.Contains(OutputTypes, typ) {
			return fmt.Errorf("record: output type %q: want one of %s", typ, strings.Join(OutputTypes, ", "))
		}
		if r.pass > 0 {
			return errors.New("record: mark outputs in the main pass, before Branch")
		}
		for _, m := range r.marks {
			if m.kind == "output" && m.name == name {
				return fmt.Errorf("record: output %s is marked already", name)
			}
		}
		if _, _, err := targeting.SynthesizeForRead(snap, node); err != nil {
			return fmt.Errorf("record: the value cannot be described: %w", err)
		}
	case "outcome":
		if !validName(name) {
			return fmt.Errorf("record: outcome code %q: want snake_case (a-z, 0-9, _)", name)
		}
		if outcomeText(snap, node) == "" {
			return errors.New("record: the node marked as an outcome shows no text")
		}
	case "checkpoint":
		if _, err := targeting.Synthesize(snap, node); err != nil {
			return fmt.Errorf("record: the checkpoint cannot be described: %w", err)
		}
	default:
		return fmt.Errorf("record: mark %q: want output, outcome or checkpoint", kind)
	}
	r.flush()
	r.add(snap, nil)
	r.marks = append(r.marks, mark{pass: r.pass, kind: kind, name: name, typ: typ, snap: snap, node: node})
	return nil
}

// Branch starts another pass from the start: what follows shows a branch
// of the workflow (a business outcome); its gestures are not compiled.
func (r *Recording) Branch() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
	r.pass++
	return r.pass
}

// Screen records the screen at the end of the demonstration (the "after"
// of the last step).
func (r *Recording) Screen(snap *domain.UiSnapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush()
	if snap != nil {
		r.add(snap, nil)
	}
}

// Summary is what the page shows of the recording so far.
type Summary struct {
	Pass  int      `json:"pass"`
	Steps []string `json:"steps"`
	Marks []string `json:"marks"`
}

// Summary describes the recorded steps and marks (never a secret's value).
func (r *Recording) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{Pass: r.pass, Steps: []string{}, Marks: []string{}}
	for _, e := range r.events {
		if p := e.step; p != nil {
			line := fmt.Sprintf("pass %d: %s %s", e.pass, p.kind, p.desc)
			switch {
			case p.kind == "type" && p.secret != "":
				line += " ← {$secret: " + p.secret + "}"
			case p.kind == "type":
				line += fmt.Sprintf(" ← %q", string(p.text))
			case p.kind == "key":
				line += " " + p.key
			}
			s.Steps = append(s.Steps, line)
		}
	}
	for _, m := range r.marks {
		s.Marks = append(s.Marks, fmt.Sprintf("pass %d: %s %s %s", m.pass, m.kind, m.name, m.typ))
	}
	return s
}

func validName(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	return strings.IndexFunc(s, func(c rune) bool { return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') }) < 0
}

// outcomeText is the text a node marked as an outcome shows.
func outcomeText(s *domain.UiSnapshot, i int) string {
	if t := strings.TrimSpace(targeting.ExtractText(s, targeting.Resolution{Node: i})); t != "" {
		return t
	}
	return strings.TrimSpace(s.Nodes[i].Name)
}
