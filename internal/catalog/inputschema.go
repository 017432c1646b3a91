package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cuahq/cua/internal/domain"
)

// compileInputsSchema compiles an approval's inputs schema: a JSON Schema
// (2020-12 unless it names another draft) over the run's inputs as one
// object, money and numbers as JSON numbers. It may not refer to any other
// document.
func compileInputsSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("inputs-schema: not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource("approval-inputs.json", doc); err != nil {
		return nil, fmt.Errorf("inputs-schema: %w", err)
	}
	s, err := c.Compile("approval-inputs.json")
	if err != nil {
		return nil, fmt.Errorf("inputs-schema: %w", err)
	}
	return s, nil
}

// noLoader refuses every remote reference: an approval is judged on what it
// holds.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("inputs-schema: refers to %s; an approval's schema must stand alone", url)
}

// schemaInstance is the inputs as the schema sees them: money, number and
// integer inputs as JSON numbers, the rest as given.
func schemaInstance(cp *domain.Capability, inputs map[string]any) (any, error) {
	out := make(map[string]any, len(inputs))
	for name, v := range inputs {
		spec := cp.Input(name)
		if s, ok := v.(string); ok && spec != nil &&
			(spec.Type == domain.TypeMoney || spec.Type == domain.TypeNumber || spec.Type == domain.TypeInteger) {
			v = json.Number(s)
		}
		out[name] = v
	}
	// Round-trip so every value is a type the validator knows.
	data, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// checkInputsSchema says why inputs fail raw, or "" when they pass. It
// names the inputs and the keywords that failed, never a value: a schema
// error would quote a sensitive input.
func checkInputsSchema(raw json.RawMessage, cp *domain.Capability, inputs map[string]any) string {
	s, err := compileInputsSchema(raw)
	if err != nil {
		return err.Error()
	}
	inst, err := schemaInstance(cp, inputs)
	if err != nil {
		return "inputs-schema: " + err.Error()
	}
	err = s.Validate(inst)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "inputs-schema: " + err.Error()
	}
	var fails []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			where := "/" + strings.Join(e.InstanceLocation, "/")
			fails = append(fails, where+" fails "+strings.Join(e.ErrorKind.KeywordPath(), "/"))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(fails)
	return "inputs outside the approval's inputs schema: " + strings.Join(slices.Compact(fails), ", ")
}
