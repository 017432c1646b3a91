package replay

import (
	"fmt"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
)

// bindRun binds a capability to a run's typed inputs: its for_each loops
// are expanded, one step per inner step and element (LOOP[N].INNER, see
// capability.ExpandLoops), then its {input.NAME} placeholders bound. Every
// later part of the run (when:, gates, re-anchoring, checkpoints, the
// resume plan, records and evidence) sees the expanded steps, so each
// iteration is a step of its own: an elevated inner step that was sent is
// never repeated by a recovery or a resume, as for any step.
func bindRun(c *domain.Capability, inputs map[string]any) (*domain.Capability, error) {
	if c.HasLoops() {
		expanded, err := capability.ExpandLoops(c, inputs)
		if err != nil {
			return nil, err
		}
		if len(expanded.Steps) == 0 {
			return nil, fmt.Errorf("bind %s: every list it walks is empty and it has no other step: nothing to do", c.Ref())
		}
		c = expanded
	}
	return capability.BindTemplates(c, inputs)
}

// setOutput stores an extracted value: an output of type array collects
// one value per iteration, in order; any other output holds the value.
func (r *run) setOutput(name string, val any) {
	if spec := r.c.Output(name); spec != nil && spec.Type == domain.TypeArray {
		list, _ := r.outputs[name].([]any)
		r.outputs[name] = append(list, val)
		return
	}
	r.outputs[name] = val
}

// checkListOutput checks each collected value of an output of type array
// against its pattern and enum.
func checkListOutput(spec domain.OutputSpec, v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("output %s: not a list", spec.Name)
	}
	elem := spec
	elem.Type = domain.TypeString
	for i, e := range list {
		if err := checkOutput(elem, fmt.Sprint(e)); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}
