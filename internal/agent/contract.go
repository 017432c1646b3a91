package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Action kinds a model may choose: the closed contract.
const (
	KindClick    = "click"
	KindType     = "type"
	KindSelect   = "select"
	KindPressKey = "press_key"
	KindNavigate = "navigate"
	KindScroll   = "scroll"
	KindWait     = "wait"
	KindExtract  = "extract"
	KindOutcome  = "outcome"
	KindFinish   = "finish"
	KindGiveUp   = "give_up"
)

// Expect is the postcondition a model predicts for its action.
type Expect struct {
	// Kind is "text_appears", "element_appears", "value_is", "url_changes"
	// or "none".
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// Turn is one decision, validated against ContractSchema.
type Turn struct {
	Thought string  `json:"thought"`
	Action  string  `json:"action"`
	Element *int    `json:"element"`
	Text    *string `json:"text"`
	Secret  *string `json:"secret"`
	Input   *string `json:"input"`
	Key     *string `json:"key"`
	URL     *string `json:"url"`
	Into    *string `json:"into"`
	Code    *string `json:"code"`
	Claim   *string `json:"claim"`
	Reason  *string `json:"reason"`
	Expect  *Expect `json:"expect"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// signature identifies a turn for the stuck guard.
func (t Turn) signature() string {
	el := -1
	if t.Element != nil {
		el = *t.Element
	}
	return fmt.Sprintf("%s|%d|%s|%s|%s|%s", t.Action, el, str(t.Text), str(t.Secret), str(t.Key), str(t.URL))
}

// ContractSchema is the JSON Schema every decide turn must satisfy. It is
// written in the strict subset structured-output endpoints accept: every
// property required, optional ones nullable, no additional properties.
const ContractSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "cua discovery turn",
  "type": "object",
  "additionalProperties": false,
  "required": ["thought", "action", "element", "text", "secret", "input", "key", "url", "into", "code", "claim", "reason", "expect"],
  "properties": {
    "thought": {"type": "string", "maxLength": 600, "description": "One or two sentences: what you see and why this action."},
    "action": {"enum": ["click", "type", "select", "press_key", "navigate", "scroll", "wait", "extract", "outcome", "finish", "give_up"]},
    "element": {"type": ["integer", "null"], "minimum": 1, "description": "The [N] number of the element acted on, read, or shown as evidence."},
    "text": {"type": ["string", "null"], "maxLength": 500, "description": "Literal text to type, or the option label to select."},
    "secret": {"type": ["string", "null"], "pattern": "^[a-z][a-z0-9_]*$", "description": "Name of a secret to type instead of text (its value is never shown to you)."},
    "input": {"type": ["string", "null"], "pattern": "^[a-z][a-z0-9_]*$", "description": "When the typed text comes from the goal, the caller input it stands for (e.g. member_id)."},
    "key": {"type": ["string", "null"], "enum": ["Enter", "Tab", "Escape", "ArrowDown", "ArrowUp", "Backspace", "Space", null]},
    "url": {"type": ["string", "null"], "maxLength": 2000},
    "into": {"type": ["string", "null"], "pattern": "^[a-z][a-z0-9_]*$", "description": "Output name for extract."},
    "code": {"type": ["string", "null"], "pattern": "^[a-z][a-z0-9_]*$", "description": "Business outcome code (e.g. member_not_found)."},
    "claim": {"type": ["string", "null"], "maxLength": 500, "description": "For finish: the visible state that proves the goal is reached."},
    "reason": {"type": ["string", "null"], "maxLength": 500, "description": "For give_up: why."},
    "expect": {
      "type": ["object", "null"],
      "additionalProperties": false,
      "required": ["kind", "text"],
      "properties": {
        "kind": {"enum": ["text_appears", "element_appears", "value_is", "url_changes", "none"]},
        "text": {"type": ["string", "null"], "maxLength": 300}
      }
    }
  }
}`

// AuditSchema is the contract of the completion audit.
const AuditSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "cua completion audit",
  "type": "object",
  "additionalProperties": false,
  "required": ["verdict", "reason"],
  "properties": {
    "verdict": {"enum": ["confirmed", "rejected"]},
    "reason": {"type": "string", "maxLength": 600}
  }
}`

var (
	schemaOnce           sync.Once
	turnSchema, auditSch *jsonschema.Schema
	schemaErr            error
)

func schemas() (*jsonschema.Schema, *jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		for id, src := range map[string]string{"turn.json": ContractSchema, "audit.json": AuditSchema} {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
			if err != nil {
				schemaErr = fmt.Errorf("agent: parse %s: %w", id, err)
				return
			}
			if err := c.AddResource(id, doc); err != nil {
				schemaErr = err
				return
			}
		}
		if turnSchema, schemaErr = c.Compile("turn.json"); schemaErr != nil {
			return
		}
		auditSch, schemaErr = c.Compile("audit.json")
	})
	return turnSchema, auditSch, schemaErr
}

// parseTurn validates raw against the contract and decodes it. The error
// explains the problem in words a model can act on.
func parseTurn(raw []byte) (Turn, error) {
	ts, _, err := schemas()
	if err != nil {
		return Turn{}, err
	}
	var t Turn
	if err := validate(ts, raw, &t); err != nil {
		return Turn{}, err
	}
	switch t.Action {
	case KindClick, KindSelect, KindExtract:
		if t.Element == nil {
			return Turn{}, fmt.Errorf("action %s needs element", t.Action)
		}
	case KindType:
		if t.Element == nil || (t.Text == nil) == (t.Secret == nil) {
			return Turn{}, fmt.Errorf("action type needs element and exactly one of text or secret")
		}
	case KindPressKey:
		if t.Key == nil {
			return Turn{}, fmt.Errorf("action press_key needs key")
		}
	case KindNavigate:
		if t.URL == nil {
			return Turn{}, fmt.Errorf("action navigate needs url")
		}
	case KindOutcome:
		if t.Code == nil {
			return Turn{}, fmt.Errorf("action outcome needs code")
		}
	case KindFinish:
		if t.Claim == nil {
			return Turn{}, fmt.Errorf("action finish needs claim")
		}
	}
	if t.Action == KindSelect && t.Text == nil {
		return Turn{}, fmt.Errorf("action select needs text (the option label)")
	}
	if t.Action == KindExtract && t.Into == nil {
		return Turn{}, fmt.Errorf("action extract needs into (the output name)")
	}
	return t, nil
}

type auditVerdict struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

func parseAudit(raw []byte) (auditVerdict, error) {
	_, as, err := schemas()
	if err != nil {
		return auditVerdict{}, err
	}
	var v auditVerdict
	err = validate(as, raw, &v)
	return v, err
}

func validate(s *jsonschema.Schema, raw []byte, into any) error {
	raw = bytes.TrimSpace(raw)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("the answer is not JSON: %v", err)
	}
	if err := s.Validate(doc); err != nil {
		msg := err.Error()
		if len(msg) > 600 {
			msg = msg[:600]
		}
		return fmt.Errorf("the answer breaks the contract: %s", msg)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("the answer does not decode: %v", err)
	}
	return nil
}
