package capability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// document is a parsed capability file: the YAML node tree, the generic
// value tree the schema validates, and (built on first use, since only a
// problem needs one) the line of every value, keyed by JSON pointer.
type document struct {
	file  string
	root  *yaml.Node
	tree  any
	lines map[string]int
}

func parseDocument(ctx context.Context, file string, data []byte) (*document, error) {
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := &document{file: file, root: &root}
	cv := converter{d: d, ctx: ctx}
	tree, err := cv.convert(root.Content[0], 0)
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

// converter turns a YAML node tree into the JSON data model. It keeps the
// path to the node being converted as a stack of unescaped tokens, and
// builds a JSON pointer from it only for a problem.
type converter struct {
	d     *document
	ctx   context.Context
	path  []string
	count int
}

func (cv *converter) ptr() string {
	var b strings.Builder
	for _, tok := range cv.path {
		b.WriteString(pointer(tok))
	}
	return b.String()
}

func (cv *converter) problem(line int, msg string) error {
	return &Problem{File: cv.d.file, Line: line, Path: displayPath(cv.ptr()), Message: msg}
}

// convert turns a YAML node into the JSON data model: map[string]any,
// []any, string, int64, float64, bool and nil. It returns ctx.Err() once
// the context is done.
func (cv *converter) convert(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, cv.problem(n.Line, "nesting is too deep")
	}
	if cv.count++; cv.count&0x3fff == 0 {
		if err := cv.ctx.Err(); err != nil {
			return nil, err
		}
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nil, cv.problem(n.Line, "YAML aliases are not allowed in a capability")
	case yaml.MappingNode:
		return cv.mapping(n, depth)
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			cv.path = append(cv.path, strconv.Itoa(i))
			val, err := cv.convert(c, depth+1)
			if err != nil {
				return nil, err
			}
			cv.path = cv.path[:len(cv.path)-1]
			s = append(s, val)
		}
		return s, nil
	case yaml.ScalarNode:
		return cv.scalar(n)
	}
	return nil, cv.problem(n.Line, "unsupported YAML node")
}

func (cv *converter) mapping(n *yaml.Node, depth int) (any, error) {
	m := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, cv.problem(k.Line, "mapping keys must be strings")
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			return nil, cv.problem(k.Line, "YAML merge keys are not allowed in a capability")
		}
		cv.path = append(cv.path, k.Value)
		if _, dup := m[k.Value]; dup {
			return nil, cv.problem(k.Line, "duplicate key")
		}
		val, err := cv.convert(v, depth+1)
		if err != nil {
			return nil, err
		}
		cv.path = cv.path[:len(cv.path)-1]
		m[k.Value] = val
	}
	return m, nil
}

// indexLines records the line of every value of the converted document
// under its JSON pointer: a mapping value's line is its key's line.
func (d *document) indexLines() {
	d.lines = map[string]int{}
	var walk func(n *yaml.Node, ptr string)
	walk = func(n *yaml.Node, ptr string) {
		if _, ok := d.lines[ptr]; !ok {
			d.lines[ptr] = n.Line
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				cp := ptr + pointer(n.Content[i].Value)
				d.lines[cp] = n.Content[i].Line
				walk(n.Content[i+1], cp)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, ptr+pointer(i))
			}
		}
	}
	walk(d.root.Content[0], "")
}

func (cv *converter) scalar(n *yaml.Node) (any, error) {
	bad := func(msg string) error { return cv.problem(n.Line, msg) }
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
	if d.lines == nil {
		d.indexLines()
	}
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
