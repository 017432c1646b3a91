package receipt

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cuahq/cua/schema"
)

// Kind names one of the four records and its published schema.
type Kind string

// The records' kinds.
const (
	KindProfile Kind = "capability-profile"
	KindPlan    Kind = "action-plan"
	KindReceipt Kind = "receipt"
	KindGate    Kind = "handoff-gate"
)

var schemas = sync.OnceValues(func() (map[Kind]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	docs := map[Kind]struct {
		id  string
		raw []byte
	}{
		KindProfile: {schema.CapabilityProfileID, schema.CapabilityProfile},
		KindPlan:    {schema.ActionPlanID, schema.ActionPlan},
		KindReceipt: {schema.ReceiptID, schema.Receipt},
		KindGate:    {schema.HandoffGateID, schema.HandoffGate},
	}
	for _, d := range docs {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(d.raw))
		if err != nil {
			return nil, fmt.Errorf("receipt: schema %s: %w", d.id, err)
		}
		if err := c.AddResource(d.id, doc); err != nil {
			return nil, fmt.Errorf("receipt: schema %s: %w", d.id, err)
		}
	}
	out := make(map[Kind]*jsonschema.Schema, len(docs))
	for k, d := range docs {
		s, err := c.Compile(d.id)
		if err != nil {
			return nil, fmt.Errorf("receipt: compile %s: %w", d.id, err)
		}
		out[k] = s
	}
	return out, nil
})

// Validate checks raw, one JSON document, against the published schema of
// kind (schema/<kind>.schema.json). It returns an error for an unknown
// kind, a document that is not JSON, or one the schema refuses (the error
// names the failing location). Safe for concurrent use.
func Validate(kind Kind, raw []byte) error {
	all, err := schemas()
	if err != nil {
		return err
	}
	s, ok := all[kind]
	if !ok {
		return fmt.Errorf("receipt: unknown record kind %q", kind)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("receipt: %s is not JSON: %w", kind, err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("receipt: %s: %w", kind, err)
	}
	return nil
}
