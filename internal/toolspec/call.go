package toolspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/cuahq/cua/internal/domain"
)

// schema compiles the input schema once per spec.
func (s *Spec) schema() (*jsonschema.Schema, error) {
	s.compile.Do(func() { s.compiled, s.compileErr = s.compileSchema() })
	return s.compiled, s.compileErr
}

func (s *Spec) compileSchema() (*jsonschema.Schema, error) {
	data, err := json.Marshal(s.InputSchema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(s.Name+".json", doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(s.Name + ".json")
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", s.Name, err)
	}
	return sch, nil
}

// Args validates a call's JSON arguments against the input schema and
// returns them as the raw inputs replay binds (numbers as written,
// booleans as "true"/"false"). A refusal is a domain INPUT_INVALID error
// naming each failing argument and keyword, never a value: an argument may
// be sensitive.
func (s *Spec) Args(raw json.RawMessage) (map[string]string, error) {
	sch, err := s.schema()
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, domain.Errorf(domain.CodeInputInvalid, "arguments are not JSON")
	}
	if err := sch.Validate(inst); err != nil {
		return nil, domain.Errorf(domain.CodeInputInvalid, "arguments outside the input schema: %s", schemaFailures(err))
	}
	obj, _ := inst.(map[string]any)
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		switch x := v.(type) {
		case string:
			out[k] = x
		case json.Number:
			out[k] = x.String()
		case bool:
			out[k] = fmt.Sprint(x)
		case []any:
			text, ok := listArg(x)
			if !ok {
				return nil, domain.Errorf(domain.CodeInputInvalid, "argument %s: the list cannot be encoded", k)
			}
			out[k] = text
		default:
			return nil, domain.Errorf(domain.CodeInputInvalid, "argument %s: want a string, number or boolean", k)
		}
	}
	return out, nil
}

// schemaFailures lists "/path fails keyword" for each leaf failure.
func schemaFailures(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var fails []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			where := "/" + strings.Join(e.InstanceLocation, "/")
			kw := strings.Join(e.ErrorKind.KeywordPath(), "/")
			fails = append(fails, where+" fails "+kw+extra(e))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(fails)
	return strings.Join(slices.Compact(fails), ", ")
}

// extra names the properties a required or additionalProperties failure
// is about: names, never values.
func extra(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return " " + strings.Join(k.Missing, ",")
	case *kind.AdditionalProperties:
		return " " + strings.Join(k.Properties, ",")
	}
	return ""
}

// Result is a call's structured content, one shape for every status.
type Result struct {
	Status      domain.RunStatus  `json:"status"`
	RunID       string            `json:"run_id,omitempty"`
	Capability  string            `json:"capability"`
	ContentHash string            `json:"content_hash,omitempty"`
	Outputs     map[string]any    `json:"outputs,omitempty"`
	Outcome     string            `json:"outcome,omitempty"`
	Returns     map[string]string `json:"returns,omitempty"`
	FailureCode string            `json:"failure_code,omitempty"`
	Message     string            `json:"message,omitempty"`
	Takeover    string            `json:"takeover,omitempty"`
}

// NewResult is the result of a finished (redacted) run record: outputs for
// a SUCCESS, the outcome for a BUSINESS_OUTCOME, code and message for a
// FAILED or NEEDS_HUMAN run. takeover, for a NEEDS_HUMAN run, says where a
// person takes it over.
func NewResult(rec *domain.RunRecord, takeover string) Result {
	r := Result{Status: rec.Status, RunID: rec.RunID, Capability: rec.Capability, ContentHash: rec.ContentHash}
	switch rec.Status {
	case domain.StatusSuccess:
		r.Outputs = rec.Outputs
	case domain.StatusBusinessOutcome:
		r.Outcome, r.Returns = rec.Outcome, rec.Returns
	case domain.StatusNeedsHuman:
		r.FailureCode, r.Message, r.Takeover = string(rec.FailureCode), rec.Message, takeover
	default:
		r.Status = domain.StatusFailed
		r.FailureCode, r.Message = string(rec.FailureCode), rec.Message
	}
	return r
}
