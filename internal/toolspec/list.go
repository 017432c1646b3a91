package toolspec

import (
	"encoding/json"

	"github.com/cuahq/cua/internal/domain"
)

// listProperty is the schema of a list input (type array): a JSON array
// of strings or of objects with the item's declared fields, bounded by
// max_items and min_items. A call's array is passed on to replay as its
// JSON text (see [listArg]).
func listProperty(in domain.InputSpec) map[string]any {
	p := map[string]any{"type": "array"}
	if in.MaxItems != nil {
		p["maxItems"] = *in.MaxItems
	}
	if in.MinItems != nil {
		p["minItems"] = *in.MinItems
	}
	item := map[string]any{"type": "string", "minLength": 1}
	if in.Items != nil && in.Items.Type == "object" {
		props := map[string]any{}
		required := []string{}
		for _, f := range in.Items.Properties {
			fp := inputProperty(f)
			// A field may come as a JSON string or number, as replay
			// takes it.
			if t, ok := fp["type"].(string); ok && t != "string" {
				fp["type"] = []string{t, "string"}
			}
			props[f.Name] = fp
			if f.Required && f.Default == nil {
				required = append(required, f.Name)
			}
		}
		item = map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	p["items"] = item
	if in.Description != "" {
		p["description"] = in.Description
	}
	return p
}

// listArg is a list argument as replay binds it: its JSON text.
func listArg(v []any) (string, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}
