package capability

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// document is a parsed capability file: the generic value tree the schema
// validates, and the line of every value, keyed by JSON pointer.
type document struct {
	file  string
	root  *yaml.Node
	tree  any
	lines map[string]int
}

func parseDocument(file string, data []byte) (*document, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		return nil, &InvalidError{File: file, Problems: []Problem{{File: file, Line: yamlErrLine(err), Message: "not valid YAML or JSON: " + yamlErrText(err)}}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &InvalidError{File: file, Problems: []Problem{{File: file, Line: extra.Line, Message: "the file holds more than one YAML document"}}}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		return nil, &InvalidError{File: file, Problems: []Problem{{File: file, Line: 1, Message: "the file holds no document"}}}
	}
	d := &document{file: file, root: &root, lines: map[string]int{}}
	tree, err := d.convert(root.Content[0], "", 0)
	if err != nil {
		var p *Problem
		if errors.As(err, &p) {
			return nil, &InvalidError{File: file, Problems: []Problem{*p}}
		}
		return nil, err
	}
	d.tree = tree
	return d, nil
}

func (p *Problem) Error() string { return p.String() }

const maxDepth = 64

// convert turns a YAML node into the JSON data model: map[string]any,
// []any, string, int64, float64, bool and nil.
func (d *document) convert(n *yaml.Node, ptr string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, &Problem{File: d.file, Line: n.Line, Path: displayPath(ptr), Message: "nesting is too deep"}
	}
	if _, ok := d.lines[ptr]; !ok {
		d.lines[ptr] = n.Line
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nil, &Problem{File: d.file, Line: n.Line, Path: displayPath(ptr), Message: "YAML aliases are not allowed in a capability"}
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, &Problem{File: d.file, Line: k.Line, Path: displayPath(ptr), Message: "mapping keys must be strings"}
			}
			if k.Value == "<<" && k.Tag == "!!merge" {
				return nil, &Problem{File: d.file, Line: k.Line, Path: displayPath(ptr), Message: "YAML merge keys are not allowed in a capability"}
			}
			cp := ptr + pointer(k.Value)
			if _, dup := m[k.Value]; dup {
				return nil, &Problem{File: d.file, Line: k.Line, Path: displayPath(cp), Message: "duplicate key"}
			}
			d.lines[cp] = k.Line
			val, err := d.convert(v, cp, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			val, err := d.convert(c, ptr+pointer(i), depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		return s, nil
	case yaml.ScalarNode:
		return d.scalar(n, ptr)
	}
	return nil, &Problem{File: d.file, Line: n.Line, Path: displayPath(ptr), Message: "unsupported YAML node"}
}

func (d *document) scalar(n *yaml.Node, ptr string) (any, error) {
	bad := func(msg string) error {
		return &Problem{File: d.file, Line: n.Line, Path: displayPath(ptr), Message: msg}
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, bad("not a boolean: " + n.Value)
		}
		return b, nil
	case "!!int":
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil {
			return nil, bad("integer out of range: " + n.Value)
		}
		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, bad("not a finite number: " + n.Value)
		}
		return f, nil
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, nil
	}
	return nil, bad(fmt.Sprintf("unsupported YAML tag %s", n.Tag))
}

// line returns the line of the value at ptr, or of its nearest ancestor.
func (d *document) line(ptr string) int {
	for {
		if l, ok := d.lines[ptr]; ok {
			return l
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return 1
		}
		ptr = ptr[:i]
	}
}

func (d *document) problem(ptr, format string, args ...any) Problem {
	return Problem{File: d.file, Line: d.line(ptr), Path: displayPath(ptr), Message: fmt.Sprintf(format, args...)}
}

func yamlErrLine(err error) int {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return 0
	}
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(rest[:j]); err == nil {
			return n
		}
	}
	return 0
}

func yamlErrText(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}
