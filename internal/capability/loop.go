package capability

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// itemRE builds the placeholder pattern of a loop's element: {AS} and
// {AS.FIELD}.
func itemRE(as string) *regexp.Regexp {
	return regexp.MustCompile(`\{` + regexp.QuoteMeta(as) + `(?:\.([a-z][a-z0-9_]*))?\}`)
}

// ExpandLoops returns a deep copy of c in which every for_each step is
// replaced by its inner steps, once per element of its list input (from
// inputs, the typed values BindInputs returns), in order. Each copy has the
// id LOOP[N].INNER and its {AS} / {AS.FIELD} placeholders (target names,
// anchor texts, predicate texts, navigate URLs) and $item values bound to
// element N; a regex name or text gets the value quoted. The copy keeps
// c's content hash; c is not modified. A capability without loops comes
// back as a copy unchanged.
func ExpandLoops(c *domain.Capability, inputs map[string]any) (*domain.Capability, error) {
	cp, err := deepCopy(c)
	if err != nil {
		return nil, fmt.Errorf("expand loops of %s: %w", c.Ref(), err)
	}
	if !c.HasLoops() {
		return cp, nil
	}
	var steps []domain.Step
	for _, st := range cp.Steps {
		fe := st.ForEach
		if fe == nil {
			steps = append(steps, st)
			continue
		}
		elems, _ := inputs[fe.Input].([]any)
		if in := c.Input(fe.Input); in != nil && in.MaxItems != nil && len(elems) > *in.MaxItems {
			return nil, fmt.Errorf("expand loops of %s: step %s: %d items, more than max_items %d", c.Ref(), st.ID, len(elems), *in.MaxItems)
		}
		for n, elem := range elems {
			for _, inner := range fe.Steps {
				s, err := bindIteration(st.ID, n, fe.As, inner, elem)
				if err != nil {
					return nil, fmt.Errorf("expand loops of %s: %w", c.Ref(), err)
				}
				steps = append(steps, s)
			}
		}
	}
	cp.Steps = steps
	return cp, nil
}

func deepCopy[T any](v *T) (*T, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var cp T
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	return &cp, nil
}

// itemValue is the text of element elem (field "" for the whole element).
func itemValue(elem any, field string) (string, error) {
	if field == "" {
		if s, ok := elem.(string); ok {
			return s, nil
		}
		return "", fmt.Errorf("the element is an object: name one of its fields")
	}
	m, ok := elem.(map[string]any)
	if !ok {
		return "", fmt.Errorf("the element is a string: it has no field %s", field)
	}
	v, ok := m[field]
	if !ok || v == nil {
		return "", fmt.Errorf("the element has no value for field %s", field)
	}
	return fmt.Sprint(v), nil
}

// bindIteration copies inner step s for iteration n of loop, bound to elem.
func bindIteration(loop string, n int, as string, s domain.Step, elem any) (domain.Step, error) {
	cp, err := deepCopy(&s)
	if err != nil {
		return domain.Step{}, err
	}
	out := *cp
	out.ID = domain.IterationStepID(loop, n, s.ID)
	var first error
	fail := func(err error) {
		if first == nil {
			first = fmt.Errorf("step %s: %w", out.ID, err)
		}
	}
	re := itemRE(as)
	subst := func(text string, quote, escape bool) string {
		return re.ReplaceAllStringFunc(text, func(m string) string {
			v, err := itemValue(elem, re.FindStringSubmatch(m)[1])
			if err != nil {
				fail(err)
				return m
			}
			switch {
			case quote:
				return regexp.QuoteMeta(v)
			case escape:
				return url.PathEscape(v)
			}
			return v
		})
	}
	stepTemplateFields("", &out, func(_ string, f templateField) {
		if f.text != nil && (f.input == nil || *f.input == "") {
			*f.text = subst(*f.text, f.regex != nil && *f.regex, false)
		}
	})
	out.URL = subst(out.URL, false, true)
	bindItemValue := func(v *domain.ValueExpr) {
		if v == nil || v.Item == "" {
			return
		}
		_, field, _ := strings.Cut(v.Item, ".")
		text, err := itemValue(elem, field)
		if err != nil {
			fail(err)
			return
		}
		*v = domain.ValueExpr{Literal: &text}
	}
	bindItemValue(out.Value)
	for _, ec := range out.Effects {
		if rw := ec.RecordWritten; rw != nil {
			for _, m := range []map[string]domain.ValueExpr{rw.Inputs, rw.Match} {
				for k, v := range m {
					bindItemValue(&v)
					m[k] = v
				}
			}
		}
	}
	return out, first
}

// stepTemplateFields visits the template fields of one step: its target
// and every predicate it holds.
func stepTemplateFields(ptr string, s *domain.Step, fn func(ptr string, f templateField)) {
	if s.Target != nil {
		targetFields(ptr+pointer("target"), s.Target, fn)
	}
	var visit func(ptr string, p *domain.Predicate)
	visit = func(ptr string, p *domain.Predicate) {
		if p == nil {
			return
		}
		predicateFields(ptr, p, fn)
		for i := range p.AllOf {
			visit(ptr+pointer("all_of", i), &p.AllOf[i])
		}
		for i := range p.AnyOf {
			visit(ptr+pointer("any_of", i), &p.AnyOf[i])
		}
		visit(ptr+pointer("not"), p.Not)
	}
	visit(ptr+pointer("when"), s.When)
	visit(ptr+pointer("precondition"), s.Precondition)
	visit(ptr+pointer("postcondition"), s.Postcondition)
	if s.Wait != nil {
		visit(ptr+pointer("wait", "until"), s.Wait.Until)
	}
}

// applyLoopDefaults fills the defaults of every loop's inner steps, as
// ApplyDefaults does for the top-level steps.
func applyLoopDefaults(c *domain.Capability) {
	for i := range c.Steps {
		if fe := c.Steps[i].ForEach; fe != nil {
			ApplyDefaults(&domain.Capability{Steps: fe.Steps})
		}
	}
}
