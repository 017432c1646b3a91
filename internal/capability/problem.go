package capability

import (
	"fmt"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a capability file.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc += ":" + strconv.Itoa(p.Line)
	}
	if p.Path == "" {
		return loc + ": " + p.Message
	}
	return loc + ": " + p.Path + ": " + p.Message
}

// InvalidError lists every problem found in one file.
type InvalidError struct {
	File     string
	Problems []Problem
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: invalid capability (%d problem", e.File, len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteByte('s')
	}
	b.WriteString(")")
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// HashMismatchError reports a sealed file whose content changed.
type HashMismatchError struct {
	File     string
	Ref      string
	Declared string
	Computed string
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("%s: content hash mismatch for %s: declared %s, computed %s", e.File, e.Ref, e.Declared, e.Computed)
}

// displayPath turns a JSON pointer ("/steps/2/target/role") into the
// field path people read ("steps[2].target.role").
func displayPath(ptr string) string {
	if ptr == "" || ptr == "/" {
		return ""
	}
	var b strings.Builder
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func pointer(tokens ...any) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		switch v := t.(type) {
		case int:
			b.WriteString(strconv.Itoa(v))
		case string:
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(v, "~", "~0"), "/", "~1"))
		default:
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

// anys converts path tokens for [pointer].
func anys(path []string) []any {
	out := make([]any, len(path))
	for i, p := range path {
		out[i] = p
	}
	return out
}
