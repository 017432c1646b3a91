package capability

import (
	"strconv"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// loopPrototype returns the capability the semantic checks judge when c
// has loops: each loop replaced by one copy of its inner steps, with the
// ids LOOP.INNER (the ids an output's source names) and a sample element
// bound, and a function that maps a pointer into that copy back to the
// file ("/steps/3/target" to "/steps/1/for_each/steps/0/target"). Without
// loops it returns c and nil.
func loopPrototype(c *domain.Capability) (*domain.Capability, func(string) string) {
	if !c.HasLoops() {
		return c, nil
	}
	cp, err := deepCopy(c)
	if err != nil {
		return c, nil
	}
	var steps []domain.Step
	var real []string
	for i, st := range cp.Steps {
		fe := st.ForEach
		if fe == nil {
			steps, real = append(steps, st), append(real, pointer("steps", i))
			continue
		}
		elem := sampleElement(c.Input(fe.Input))
		for j, inner := range fe.Steps {
			s, _ := bindIteration(st.ID, 0, fe.As, inner, elem)
			s.ID = domain.LoopStepID(st.ID, inner.ID)
			steps, real = append(steps, s), append(real, pointer("steps", i, "for_each", "steps", j))
		}
	}
	cp.Steps = steps
	return cp, func(ptr string) string {
		rest, ok := strings.CutPrefix(ptr, "/steps/")
		if !ok {
			return ptr
		}
		num, tail, _ := strings.Cut(rest, "/")
		k, err := strconv.Atoi(num)
		if err != nil || k < 0 || k >= len(real) {
			return ptr
		}
		if tail != "" {
			return real[k] + "/" + tail
		}
		return real[k]
	}
}

// sampleElement is an element of the list input in: "x", or an object
// with "x" in every declared field.
func sampleElement(in *domain.InputSpec) any {
	if in == nil || in.Items == nil || in.Items.Type != "object" {
		return "x"
	}
	m := map[string]any{}
	for _, p := range in.Items.Properties {
		m[p.Name] = "x"
	}
	return m
}

// loops checks what the loops and list inputs of orig (the capability as
// written) need: a loop names a list input and sets nothing but its
// steps, loops do not nest, every {AS.FIELD} names a declared field, a
// list input is bounded, and policy.max_steps covers every loop at its
// bound.
func (v *semantic) loops(orig *domain.Capability) {
	remap := v.remap
	v.remap = nil
	defer func() { v.remap = remap; v.listUses(orig) }()
	for i := range orig.Inputs {
		v.listInput(pointer("inputs", i), &orig.Inputs[i])
	}
	for i := range orig.Steps {
		st := &orig.Steps[i]
		if st.ForEach == nil {
			if st.Action == "" {
				v.add(pointer("steps", i, "action"), "required field is missing")
			}
			continue
		}
		v.loop(orig, i)
	}
	if orig.HasLoops() {
		if n := orig.StepCount(); n > orig.Policy.MaxSteps {
			v.add(pointer("policy", "max_steps"), "max_steps %d does not cover the loops: a run may take %d steps (each loop's max_items times its inner steps, plus the other steps)", orig.Policy.MaxSteps, n)
		}
		if re := orig.Reentry; re != nil && strings.Contains(re.Step, ".") {
			v.add(pointer("reentry", "step"), "a run cannot reenter inside a loop")
		}
	}
}

// listInput checks one input's list fields.
func (v *semantic) listInput(ptr string, in *domain.InputSpec) {
	if in.Type != domain.TypeArray {
		for f, set := range map[string]bool{"items": in.Items != nil, "max_items": in.MaxItems != nil, "min_items": in.MinItems != nil} {
			if set {
				v.add(ptr+pointer(f), "only allowed on a list input (type array)")
			}
		}
		return
	}
	if in.MaxItems == nil {
		v.add(ptr+pointer("max_items"), "a list input needs max_items (1..%d): every loop over it is bounded", domain.MaxListItems)
	} else if in.MinItems != nil && *in.MinItems > *in.MaxItems {
		v.add(ptr+pointer("min_items"), "min_items %d exceeds max_items %d", *in.MinItems, *in.MaxItems)
	}
	if in.Sensitive {
		v.add(ptr+pointer("sensitive"), "a list input cannot be sensitive (its elements are shown in targets and records)")
	}
	if in.Pattern != "" || in.MinLength != nil || in.MaxLength != nil || in.Minimum != nil || in.Maximum != nil || len(in.Enum) > 0 || len(in.Transform) > 0 {
		v.add(ptr, "a list input takes items, max_items and min_items; put pattern, lengths, bounds, enum or transform on its items' properties")
	}
	if in.Items != nil && in.Items.Type == "object" {
		if len(in.Items.Properties) == 0 {
			v.add(ptr+pointer("items", "properties"), "an object item needs its fields declared")
		}
		seen := map[string]bool{}
		for j, p := range in.Items.Properties {
			if p.Type == domain.TypeArray {
				v.add(ptr+pointer("items", "properties", j, "type"), "an item field cannot be a list")
			}
			if seen[p.Name] {
				v.add(ptr+pointer("items", "properties", j, "name"), "duplicate field %q", p.Name)
			}
			seen[p.Name] = true
		}
	} else if in.Items != nil && len(in.Items.Properties) > 0 {
		v.add(ptr+pointer("items", "properties"), "only allowed on items of type object")
	}
}

// loop checks the loop step orig.Steps[i].
func (v *semantic) loop(orig *domain.Capability, i int) {
	st := &orig.Steps[i]
	fe := st.ForEach
	p := func(f ...any) string { return pointer(append([]any{"steps", i}, f...)...) }
	if st.Action != "" || st.Target != nil || st.Value != nil || st.Key != "" || st.URL != "" || st.Into != "" ||
		!st.Transform.IsZero() || st.When != nil || st.Precondition != nil || st.Postcondition != nil ||
		st.Wait != nil || st.Gate || st.Checkpoint || len(st.Effects) > 0 || st.Risk.Rank() > 0 {
		v.add(p(), "a for_each step sets only id, description and for_each: put its action in its steps")
	}
	in := orig.Input(fe.Input)
	switch {
	case in == nil:
		v.add(p("for_each", "input"), "undeclared input %q", fe.Input)
	case in.Type != domain.TypeArray:
		v.add(p("for_each", "input"), "input %q is %s, not a list (type array)", fe.Input, in.Type)
	}
	if fe.As == "input" || fe.As == "base_url" {
		v.add(p("for_each", "as"), "%q is taken: name the element otherwise (item)", fe.As)
	}
	for j := range fe.Steps {
		inner := &fe.Steps[j]
		ip := func(f ...any) string { return p(append([]any{"for_each", "steps", j}, f...)...) }
		if inner.ForEach != nil {
			v.add(ip("for_each"), "loops do not nest: a for_each step cannot hold another")
			continue
		}
		if inner.Action == "" {
			v.add(ip("action"), "required field is missing")
		}
		v.itemRefs(ip, inner, fe.As, in)
	}
}

// itemRefs checks that every {AS.FIELD} and $item of an inner step names
// what its list's elements hold.
func (v *semantic) itemRefs(ip func(f ...any) string, s *domain.Step, as string, in *domain.InputSpec) {
	var items *domain.ItemSpec
	if in != nil {
		items = in.Items
	}
	object := items != nil && items.Type == "object"
	check := func(ptr, field string) {
		switch {
		case field == "" && object:
			v.add(ptr, "the elements of %s are objects: name a field ({%s.FIELD})", in.Name, as)
		case field != "" && !object:
			v.add(ptr, "the elements of the list are strings: they have no field %s", field)
		case field != "" && items.Property(field) == nil:
			v.add(ptr, "unknown item field %q (declared: %s)", field, strings.Join(collect(items.Properties, func(p domain.InputSpec) string { return p.Name }), ", "))
		}
	}
	re := itemRE(as)
	texts := func(ptr, text string) {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			check(ptr, m[1])
		}
	}
	cp, err := deepCopy(s)
	if err != nil {
		return
	}
	stepTemplateFields(ip(), cp, func(ptr string, f templateField) {
		if f.text != nil {
			texts(ptr, *f.text)
		}
	})
	texts(ip("url"), s.URL)
	value := func(ptr string, val *domain.ValueExpr) {
		if val == nil || val.Item == "" {
			return
		}
		name, field, _ := strings.Cut(val.Item, ".")
		if name != as {
			v.add(ptr, "the loop's element is named %q, not %q", as, name)
		} else {
			check(ptr, field)
		}
	}
	value(ip("value", "$item"), s.Value)
	for e, ec := range s.Effects {
		if rw := ec.RecordWritten; rw != nil {
			for f, m := range map[string]map[string]domain.ValueExpr{"inputs": rw.Inputs, "match": rw.Match} {
				for k, val := range m {
					value(ip("effects", e, "record_written", f, k, "$item"), &val)
				}
			}
		}
	}
}

// listUses checks that a list input is used only by loops (never typed or
// matched whole) and that an output read inside a loop is a list.
func (v *semantic) listUses(orig *domain.Capability) {
	isList := func(name string) bool {
		in := orig.Input(name)
		return in != nil && in.Type == domain.TypeArray
	}
	visitTemplates(v.c, func(ptr string, f templateField) {
		for _, name := range templateInputs(f) {
			if isList(name) {
				v.add(ptr, "input %q is a list: walk it with for_each and use {AS} instead", name)
			}
		}
	})
	for k := range v.c.Steps {
		s := &v.c.Steps[k]
		if s.Value != nil && s.Value.Input != "" && isList(s.Value.Input) {
			v.add(pointer("steps", k, "value", "$input"), "input %q is a list: walk it with for_each and type {$item: AS}", s.Value.Input)
		}
		if s.Value != nil && s.Value.Item != "" && !strings.Contains(s.ID, ".") {
			v.add(pointer("steps", k, "value", "$item"), "$item is only allowed inside a for_each loop")
		}
	}
	for i, out := range orig.Outputs {
		inLoop := strings.Contains(out.Source.Step, ".")
		switch {
		case out.Type == domain.TypeArray && !inLoop:
			v.add(pointer("outputs", i, "type"), "an output of type array collects one value per iteration: its source must be a step inside a loop (LOOP.STEP)")
		case out.Type != domain.TypeArray && inLoop:
			v.add(pointer("outputs", i, "type"), "an output read inside a loop collects one value per iteration: declare it type array")
		}
	}
}
