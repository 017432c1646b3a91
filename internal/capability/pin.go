package capability

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Resolver finds the sealed capability a reference names. With pin set it
// must return the capability whose content hash is pin (and whose id, or
// id@version, is ref); without, ref's capability ("id" resolves to its
// highest sealed version).
type Resolver func(ref, pin string) (*Loaded, error)

// SealPinned seals the draft at path like Seal, after pinning every
// prerequisite and run_capability remedy (DESIGN invariant 14): a bare id
// is rewritten to the id@version resolve finds for it, and the content
// hash of that capability is written beside its `capability:` key when it
// carries none. A reference resolve cannot find is refused, naming the
// field. A file sealed before is never changed: sealing it again is a
// no-op when it is pinned and unchanged, and is refused (bump the version)
// when its content changed or it still has unpinned references.
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
		return resealed(path, l)
	}
	out, n, err := insertPins(l.doc, data, resolve)
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", path, err)
	}
	if n > 0 {
		back, err := Parse(path, out)
		if err != nil {
			return "", fmt.Errorf("seal %s: the pinned text does not validate: %w", path, err)
		}
		if err := CheckPinned(back.Capability); err != nil {
			return "", fmt.Errorf("seal %s: %w", path, err)
		}
		if err := WriteFileAtomic(path, out); err != nil {
			return "", fmt.Errorf("seal %s: %w", path, err)
		}
	}
	return Seal(path)
}

// resealed answers a seal of a file that is sealed already: its id@version
// is frozen (invariant 9), so nothing may change its content, pins
// included.
func resealed(path string, l *Loaded) (string, error) {
	c := l.Capability
	if err := unchanged(path, l); err != nil {
		return "", err
	}
	if err := CheckPinned(c); err != nil {
		return "", fmt.Errorf("seal %s: %w; pinning changes the content of %s, which was sealed before and is frozen: bump the version (and remove content_hash), then seal again",
			path, err, c.Ref())
	}
	return l.Hash, nil
}

// pinSite is one `capability:` value to pin: where it is, what it becomes
// and the pin written beside it.
type pinSite struct {
	line   int    // 1-based line of the capability value
	col    int    // byte offset in its line where the value's text starts
	raw    string // the value's text as written (quotes included)
	ref    string // the new value's text, "" to keep raw
	hash   string // the pin to write, "" when one is written already
	flow   bool
	json   bool // the key is double-quoted: write the pin as JSON
	indent int
}

// insertPins pins every capability reference under prerequisites and
// recovery (run_capability) that is a bare id or carries no content_hash,
// returning the new text and how many references it changed.
func insertPins(doc *document, data []byte, resolve Resolver) ([]byte, int, error) {
	top := doc.root.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, 0, fmt.Errorf("the document is not a mapping")
	}
	lines := strings.SplitAfter(string(data), "\n")
	var sites []pinSite
	for i := 0; i+1 < len(top.Content); i += 2 {
		key := top.Content[i].Value
		seq := top.Content[i+1]
		if (key != "prerequisites" && key != "recovery") || seq.Kind != yaml.SequenceNode {
			continue
		}
		for j, item := range seq.Content {
			s, ok, err := pinSiteFor(fmt.Sprintf("%s[%d].capability", key, j), key == "recovery", "capability", item, lines, resolve)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				sites = append(sites, s)
			}
		}
	}
	more, err := readBackPinSites(top, lines, resolve)
	if err != nil {
		return nil, 0, err
	}
	sites = append(sites, more...)
	if len(sites) == 0 {
		return data, 0, nil
	}
	return applyPins(lines, sites), len(sites), nil
}

// pinSiteFor resolves the reference of one prerequisite or recovery item
// (field names it) and says how to pin it; ok is false when there is
// nothing to pin.
func pinSiteFor(field string, recovery bool, refKey string, item *yaml.Node, lines []string, resolve Resolver) (pinSite, bool, error) {
	if item.Kind != yaml.MappingNode {
		return pinSite{}, false, nil
	}
	if r := mapValue(item, "remedy"); recovery && (r == nil || r.Value != "run_capability") {
		return pinSite{}, false, nil
	}
	ref := mapValue(item, refKey)
	if ref == nil || ref.Kind != yaml.ScalarNode {
		return pinSite{}, false, nil
	}
	var pin string
	if p := mapValue(item, "content_hash"); p != nil {
		pin = p.Value
	}
	id, _, versioned := strings.Cut(ref.Value, "@")
	if versioned && pin != "" {
		return pinSite{}, false, nil
	}
	if resolve == nil {
		return pinSite{}, false, fmt.Errorf("%s: %q cannot be pinned without a capability library", field, ref.Value)
	}
	sub, err := resolve(ref.Value, pin)
	if err != nil {
		return pinSite{}, false, fmt.Errorf("%s: %s: %w", field, ref.Value, err)
	}
	if err := checkResolved(field, ref.Value, id, versioned, pin, sub); err != nil {
		return pinSite{}, false, err
	}
	raw, at, err := rawScalar(lines, ref)
	if err != nil {
		return pinSite{}, false, fmt.Errorf("%s: %w; write %s: %s and content_hash: %s by hand", field, err, refKey, sub.Capability.Ref(), sub.Hash)
	}
	key := mapKey(item, refKey)
	s := pinSite{line: ref.Line, col: at, raw: raw, flow: item.Style&yaml.FlowStyle != 0,
		json: key.Style&yaml.DoubleQuotedStyle != 0, indent: key.Column - 1}
	if !versioned {
		s.ref = strings.Replace(raw, ref.Value, sub.Capability.Ref(), 1)
	}
	if pin == "" {
		s.hash = sub.Hash
	}
	return s, true, nil
}

// checkResolved checks that what the resolver returned for ref is a sealed
// capability with ref's id (and version, when ref names one) and, for a
// pinned ref, the pinned hash.
func checkResolved(field, ref, id string, versioned bool, pin string, sub *Loaded) error {
	got := sub.Capability.Ref()
	switch {
	case !sub.Sealed:
		return fmt.Errorf("%s: %s (%s) is a draft; seal it first", field, ref, sub.File)
	case sub.Capability.ID != id || (versioned && got != ref):
		return fmt.Errorf("%s: %s resolved to %s (%s)", field, ref, got, sub.File)
	case pin != "" && sub.Hash != pin:
		return fmt.Errorf("%s: %s is pinned to %s, but %s holds %s", field, ref, pin, sub.File, sub.Hash)
	}
	return nil
}

// rawScalar returns the text of the plain or quoted scalar n as written on
// its line, and the byte offset in the line where it starts.
func rawScalar(lines []string, n *yaml.Node) (string, int, error) {
	if n.Line < 1 || n.Line > len(lines) {
		return "", 0, fmt.Errorf("line %d is out of range", n.Line)
	}
	ln := lines[n.Line-1]
	at := runeOffset(ln, n.Column-1)
	raw := n.Value
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		raw = `"` + n.Value + `"`
	case n.Style&yaml.SingleQuotedStyle != 0:
		raw = "'" + n.Value + "'"
	case n.Style != 0 && n.Style != yaml.FlowStyle:
		return "", 0, fmt.Errorf("line %d: the reference is a block scalar", n.Line)
	}
	if at < 0 || !strings.HasPrefix(ln[at:], raw) {
		return "", 0, fmt.Errorf("line %d: cannot find the reference as written", n.Line)
	}
	return raw, at, nil
}

// runeOffset is the byte offset of the n-th rune of s (YAML columns count
// characters), or -1 past its end.
func runeOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return -1
}

// applyPins writes every site into lines, bottom-up and right to left so
// that the positions of the sites not yet written stay right.
func applyPins(lines []string, sites []pinSite) []byte {
	slices.SortFunc(sites, func(a, b pinSite) int {
		if c := cmp.Compare(b.line, a.line); c != 0 {
			return c
		}
		return cmp.Compare(b.col, a.col)
	})
	for _, s := range sites {
		idx, at := s.line-1, s.col
		ln := lines[idx]
		text := s.raw
		if s.ref != "" {
			text = s.ref
		}
		end := at + len(text)
		ln = ln[:at] + text + ln[at+len(s.raw):]
		switch {
		case s.hash == "":
			lines[idx] = ln
		case s.flow && s.json:
			lines[idx] = ln[:end] + `, "content_hash": "` + s.hash + `"` + ln[end:]
		case s.flow:
			lines[idx] = ln[:end] + ", content_hash: " + s.hash + ln[end:]
		default:
			if !strings.HasSuffix(ln, "\n") {
				ln += "\n"
			}
			lines[idx] = ln
			lines = slices.Insert(lines, idx+1, strings.Repeat(" ", s.indent)+"content_hash: "+s.hash+"\n")
		}
	}
	var b bytes.Buffer
	for _, ln := range lines {
		b.WriteString(ln)
	}
	return b.Bytes()
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
