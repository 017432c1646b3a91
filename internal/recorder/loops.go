package recorder

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// maxLoopPeriod is the most steps one iteration of a folded loop holds.
const maxLoopPeriod = 3

// loopItem is the element name of a folded loop.
const loopItem = "item"

// foldLoops folds a repeated action over table rows into a for_each loop:
// a run of at least two groups of one to maxLoopPeriod consecutive steps
// whose first step targets a node in the row of a different text (anchor
// row_of), and which are the same steps once that text is replaced by
// {item}, becomes one loop over a new list input of those texts. Each
// group's extract steps become one array output. A reviewer is asked to
// check the loop and the list bound.
func (k *compiler) foldLoops() {
	steps := k.c.Steps
	var out []domain.Step
	for i := 0; i < len(steps); {
		p, r := bestRun(steps[i:])
		if r < 2 {
			out = append(out, steps[i])
			i++
			continue
		}
		out = append(out, k.loop(steps[i:i+p*r], p, r))
		i += p * r
	}
	k.c.Steps = out
}

// bestRun returns the period and repeat count of the longest run of equal
// row groups at the start of steps (r < 2 when there is none).
func bestRun(steps []domain.Step) (period, repeats int) {
	for p := 1; p <= maxLoopPeriod && p <= len(steps); p++ {
		lit0 := rowText(steps[0])
		if lit0 == "" {
			return 0, 0
		}
		want := canonical(steps[:p], lit0)
		seen := []string{lit0}
		r := 1
		for (r+1)*p <= len(steps) {
			g := steps[r*p : (r+1)*p]
			lit := rowText(g[0])
			if lit == "" || slices.Contains(seen, lit) || canonical(g, lit) != want {
				break
			}
			seen = append(seen, lit)
			r++
		}
		if r >= 2 && p*r > period*repeats {
			period, repeats = p, r
		}
	}
	return period, repeats
}

// rowText is the row a step's target is anchored to, or "" when it is not
// a row_of anchor with a plain text.
func rowText(st domain.Step) string {
	t := st.Target
	if t == nil || t.Anchor == nil || t.Anchor.Relation != domain.RelRowOf {
		return ""
	}
	if txt := t.Anchor.Text; len(txt) >= 2 && !strings.ContainsAny(txt, "{}") {
		return txt
	}
	return ""
}

// canonical is a group of steps as JSON with its row text replaced by
// {item}, without what differs by construction (ids, descriptions,
// outputs filled).
func canonical(group []domain.Step, lit string) string {
	var parts []string
	for _, st := range group {
		st.ID, st.Description, st.Into = "", "", ""
		b, err := json.Marshal(st)
		if err != nil {
			return fmt.Sprintf("invalid %p", &group[0])
		}
		esc, _ := json.Marshal(lit)
		parts = append(parts, strings.ReplaceAll(string(b), strings.Trim(string(esc), `"`), "{"+loopItem+"}"))
	}
	return strings.Join(parts, "\n")
}

// loop builds the loop step for r groups of p steps, declares its list
// input and turns each group's outputs into array outputs.
func (k *compiler) loop(run []domain.Step, p, r int) domain.Step {
	first := run[0]
	label := targetLabel(first.Target)
	if first.Target != nil && first.Target.Name != nil && first.Target.Name.Value != "" {
		label = first.Target.Name.Value
	}
	id := k.stepID(domain.ActionType(label+" each"), "")
	id = strings.TrimPrefix(strings.TrimSuffix(id, "_"), "_")
	rows := make([]string, r)
	for j := range r {
		rows[j] = rowText(run[j*p])
	}
	input := k.inputName("rows")
	example, _ := json.Marshal(rows)
	k.c.Inputs = append(k.c.Inputs, domain.InputSpec{
		Name: input, Type: domain.TypeArray, Required: true,
		Description: "The rows to act on, by the text of their row.",
		Example:     string(example),
		ListSpec: domain.ListSpec{
			Items: &domain.ItemSpec{Type: domain.TypeString}, MinItems: ptr(1),
			MaxItems: ptr(min(domain.MaxListItems, max(10, 2*r))),
		},
	})
	inner := make([]domain.Step, 0, p)
	for _, st := range run[:p] {
		var s domain.Step
		if err := json.Unmarshal([]byte(canonical([]domain.Step{st}, rows[0])), &s); err != nil {
			panic(fmt.Sprintf("recorder: loop step %s: %v", st.ID, err))
		}
		s.ID, s.Description, s.Into = st.ID, st.Description, st.Into
		// An id named after the first row (extract_laptop_repair) is named
		// after the element instead.
		if row := snake(rows[0]); row != "" {
			if renamed := strings.ReplaceAll(s.ID, row, loopItem); !k.ids[renamed] {
				s.ID, k.ids[renamed] = renamed, true
			}
		}
		inner = append(inner, s)
	}
	// Outputs of the later groups are the same output, one value per row.
	for j := 1; j < r; j++ {
		for _, st := range run[j*p : (j+1)*p] {
			if st.Into != "" {
				k.c.Outputs = slices.DeleteFunc(k.c.Outputs, func(o domain.OutputSpec) bool { return o.Name == st.Into })
			}
		}
	}
	for _, s := range inner {
		if s.Into == "" {
			continue
		}
		for i := range k.c.Outputs {
			if o := &k.c.Outputs[i]; o.Name == s.Into {
				o.Type, o.Pattern, o.Enum, o.Currency = domain.TypeArray, "", nil, ""
				o.Source.Step = domain.LoopStepID(id, s.ID)
			}
		}
	}
	k.note("steps %s to %s repeat one action over the rows %s: they are folded into loop %s over list input %s (max_items %d); check that every row is acted on alike and set the bound",
		run[0].ID, run[len(run)-1].ID, strings.Join(rows, ", "), id, input, *k.c.Inputs[len(k.c.Inputs)-1].MaxItems)
	return domain.Step{
		ID: id, Description: "Repeat for each row named in " + input + ".",
		ForEach: &domain.ForEach{Input: input, As: loopItem, Steps: inner},
	}
}

// flatSteps lists steps with each loop replaced by its inner steps.
func flatSteps(steps []domain.Step) []domain.Step {
	var out []domain.Step
	for _, s := range steps {
		if s.ForEach != nil {
			out = append(out, s.ForEach.Steps...)
			continue
		}
		out = append(out, s)
	}
	return out
}
