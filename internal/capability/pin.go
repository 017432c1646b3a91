package capability

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Resolver finds the sealed capability a reference ("id" or "id@version")
// names.
type Resolver func(ref string) (*Loaded, error)

// SealPinned seals the draft at path like Seal, after pinning every
// prerequisite and run_capability remedy that carries no content_hash yet:
// the hash of the capability resolve finds for it is written beside its
// `capability:` key (DESIGN invariant 14). A reference resolve cannot find
// is refused, naming the field.
func SealPinned(path string, resolve Resolver) (string, error) {
	data, err := readLimited(path)
	if err != nil {
		return "", err
	}
	l, err := parseUnverified(path, data)
	if err != nil {
		return "", err
	}
	if l.Sealed {
		return Seal(path)
	}
	out, n, err := insertPins(l.doc, data, resolve)
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", path, err)
	}
	if n > 0 {
		if _, err := Parse(path, out); err != nil {
			return "", fmt.Errorf("seal %s: the pinned text does not validate: %w", path, err)
		}
		if err := WriteFileAtomic(path, out); err != nil {
			return "", fmt.Errorf("seal %s: %w", path, err)
		}
	}
	return Seal(path)
}

// pinSite is one `capability:` value to pin: where its line ends, and how
// the pin is written there.
type pinSite struct {
	line   int // 1-based line of the capability value
	text   string
	flow   bool
	indent int
	col    int // 1-based column just after the value, for flow style
}

// insertPins adds content_hash beside every unpinned capability reference
// under prerequisites and recovery, returning the new text and how many
// pins it wrote.
func insertPins(doc *document, data []byte, resolve Resolver) ([]byte, int, error) {
	top := doc.root.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, 0, fmt.Errorf("the document is not a mapping")
	}
	var sites []pinSite
	for i := 0; i+1 < len(top.Content); i += 2 {
		key := top.Content[i].Value
		if key != "prerequisites" && key != "recovery" {
			continue
		}
		seq := top.Content[i+1]
		if seq.Kind != yaml.SequenceNode {
			continue
		}
		for j, item := range seq.Content {
			if item.Kind != yaml.MappingNode {
				continue
			}
			ref, pinned, isRun := mapValue(item, "capability"), mapValue(item, "content_hash") != nil, true
			if key == "recovery" {
				r := mapValue(item, "remedy")
				isRun = r != nil && r.Value == "run_capability"
			}
			if ref == nil || pinned || !isRun {
				continue
			}
			field := fmt.Sprintf("%s[%d].capability", key, j)
			if resolve == nil {
				return nil, 0, fmt.Errorf("%s: %s cannot be pinned without a capability library", field, ref.Value)
			}
			sub, err := resolve(ref.Value)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %s: %w", field, ref.Value, err)
			}
			if !sub.Sealed {
				return nil, 0, fmt.Errorf("%s: %s (%s) is a draft; seal it first", field, ref.Value, sub.File)
			}
			if ref.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 && item.Style&yaml.FlowStyle != 0 {
				return nil, 0, fmt.Errorf("%s: a quoted reference in flow style cannot be pinned in place; write content_hash: %s beside it", field, sub.Hash)
			}
			keyNode := mapKey(item, "capability")
			sites = append(sites, pinSite{line: ref.Line, text: sub.Hash, flow: item.Style&yaml.FlowStyle != 0,
				indent: keyNode.Column - 1, col: ref.Column + len(ref.Value)})
		}
	}
	if len(sites) == 0 {
		return data, 0, nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	// Insert from the bottom so earlier line numbers stay right.
	slices.SortFunc(sites, func(a, b pinSite) int { return b.line - a.line })
	for _, s := range sites {
		idx := s.line - 1
		if idx < 0 || idx >= len(lines) {
			return nil, 0, fmt.Errorf("line %d is out of range", s.line)
		}
		if s.flow {
			ln := lines[idx]
			at := s.col - 1
			if at > len(ln) {
				return nil, 0, fmt.Errorf("line %d: cannot find the end of the capability reference", s.line)
			}
			lines[idx] = ln[:at] + ", content_hash: " + s.text + ln[at:]
			continue
		}
		pin := strings.Repeat(" ", s.indent) + "content_hash: " + s.text + "\n"
		if !strings.HasSuffix(lines[idx], "\n") {
			lines[idx] += "\n"
		}
		lines = slices.Insert(lines, idx+1, pin)
	}
	var b bytes.Buffer
	for _, ln := range lines {
		b.WriteString(ln)
	}
	return b.Bytes(), len(sites), nil
}

func mapKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
