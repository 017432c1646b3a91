package recorder

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/cuahq/cua/internal/domain"
)

// This file writes the constructs added to the format after the first
// writer: input transforms, list inputs, loops, effect contracts and the
// identity declaration.

// putInputExtras writes an input's transform list and its list spec
// (items, min_items, max_items).
func putInputExtras(m *yaml.Node, in domain.InputSpec) {
	if len(in.Transform) > 0 {
		s := sequence(true)
		for _, t := range in.Transform {
			if t.Op == domain.InputFormat {
				n := mapping(true)
				put(n, "format", quoted(t.Format))
				s.Content = append(s.Content, n)
				continue
			}
			s.Content = append(s.Content, str(t.Op))
		}
		put(m, "transform", s)
	}
	if it := in.Items; it != nil {
		n := mapping(len(it.Properties) == 0)
		put(n, "type", str(string(it.Type)))
		if len(it.Properties) > 0 {
			s := sequence(false)
			for _, p := range it.Properties {
				s.Content = append(s.Content, inputNode(p))
			}
			put(n, "properties", s)
		}
		put(m, "items", n)
	}
	if in.MinItems != nil {
		put(m, "min_items", intNode(*in.MinItems))
	}
	if in.MaxItems != nil {
		put(m, "max_items", intNode(*in.MaxItems))
	}
}

// forEachNode writes a loop: its list input, its element name and its
// inner steps.
func forEachNode(fe domain.ForEach) *yaml.Node {
	m := mapping(false)
	put(m, "input", str(fe.Input))
	put(m, "as", str(fe.As))
	s := sequence(false)
	for _, st := range fe.Steps {
		s.Content = append(s.Content, stepNode(st))
	}
	put(m, "steps", s)
	return m
}

// effectsNode writes a step's effect contracts.
func effectsNode(effects []domain.EffectContract) *yaml.Node {
	s := sequence(false)
	for _, e := range effects {
		m := mapping(false)
		if rw := e.RecordWritten; rw != nil {
			put(m, "record_written", recordWrittenNode(*rw))
		} else {
			// No kind set: an empty contract, which validation names.
			m.Style = yaml.FlowStyle
		}
		s.Content = append(s.Content, m)
	}
	return s
}

func recordWrittenNode(rw domain.RecordWritten) *yaml.Node {
	m := mapping(false)
	put(m, "via", str(rw.Via))
	putStr(m, "content_hash", rw.ContentHash)
	if len(rw.Inputs) > 0 {
		put(m, "inputs", valueMapNode(rw.Inputs, true))
	}
	put(m, "match", valueMapNode(rw.Match, false))
	put(m, "count", intNode(rw.Count))
	if rw.Others != nil {
		put(m, "others", intNode(*rw.Others))
	}
	return m
}

// valueMapNode writes a map of value expressions with its keys sorted.
func valueMapNode(vals map[string]domain.ValueExpr, flow bool) *yaml.Node {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	m := mapping(flow || len(keys) == 0)
	for _, k := range keys {
		put(m, k, valueNode(vals[k]))
	}
	return m
}

// identityNode writes the identity declaration.
func identityNode(id domain.Identity) *yaml.Node {
	m := mapping(false)
	put(m, "unarmed", str(id.Unarmed))
	return m
}
