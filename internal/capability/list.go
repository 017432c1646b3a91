package capability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cuahq/cua/internal/domain"
)

// coerceList checks a list input's value, given as JSON text (the CLI's
// --input items='["Alpha","Beta"]', a batch CSV cell, an MCP or jobs
// argument re-encoded), and returns []any of strings, or of
// map[string]any whose fields are typed by the item's properties.
func coerceList(spec domain.InputSpec, raw string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var elems []any
	if err := dec.Decode(&elems); err != nil {
		return nil, errors.New(`not a JSON array (write it as JSON: ["Alpha","Beta"] or [{"name":"A"}])`)
	}
	if dec.More() {
		return nil, errors.New("text after the JSON array")
	}
	if spec.MaxItems == nil {
		return nil, errors.New("a list input needs max_items")
	}
	if len(elems) > *spec.MaxItems {
		return nil, fmt.Errorf("%d items, more than max_items %d", len(elems), *spec.MaxItems)
	}
	if spec.MinItems != nil && len(elems) < *spec.MinItems {
		return nil, fmt.Errorf("%d items, fewer than min_items %d", len(elems), *spec.MinItems)
	}
	out := make([]any, 0, len(elems))
	for i, e := range elems {
		v, err := coerceItem(spec.Items, e)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// coerceItem checks one element against the item spec.
func coerceItem(item *domain.ItemSpec, e any) (any, error) {
	if item == nil || item.Type != "object" {
		s, ok := e.(string)
		if !ok {
			return nil, errors.New("not a string")
		}
		if s == "" {
			return nil, errors.New("empty string")
		}
		return s, nil
	}
	m, ok := e.(map[string]any)
	if !ok {
		return nil, errors.New("not an object")
	}
	for k := range m {
		if item.Property(k) == nil {
			return nil, fmt.Errorf("unknown field %q", k)
		}
	}
	out := make(map[string]any, len(item.Properties))
	for _, p := range item.Properties {
		raw, ok := m[p.Name]
		if !ok || raw == nil {
			if p.Default != nil {
				raw = fmt.Sprint(p.Default)
			} else if p.Required {
				return nil, fmt.Errorf("field %s is missing", p.Name)
			} else {
				continue
			}
		}
		var text string
		switch r := raw.(type) {
		case string:
			text = r
		case json.Number:
			text = r.String()
		case bool:
			text = strconv.FormatBool(r)
		default:
			return nil, fmt.Errorf("field %s: not a string, number or boolean", p.Name)
		}
		v, err := CoerceInput(p, text)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", p.Name, err)
		}
		out[p.Name] = v
	}
	return out, nil
}

// ListValue renders a bound list input back as the JSON text a caller
// passes (the form BindInputs takes).
func ListValue(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode list: %w", err)
	}
	return string(b), nil
}
