package redact

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// literalForms returns the spellings under which lit may appear in a sink:
// itself, URL-encoded (query and path escaping, upper and lower case hex),
// JSON-escaped (with and without HTML escaping, ASCII-only, with escaped
// slashes) and HTML-escaped (decimal and named entities). Duplicates are
// removed.
func literalForms(lit string) []string {
	forms := []string{lit}
	add := func(f string) {
		if f != "" && !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, f := range []string{url.QueryEscape(lit), url.PathEscape(lit)} {
		add(f)
		add(lowerHexEscapes(f))
	}
	for _, f := range []string{jsonEscape(lit, true), jsonEscape(lit, false), jsonASCII(lit)} {
		add(f)
		add(strings.ReplaceAll(f, "/", `\/`))
	}
	h := html.EscapeString(lit)
	add(h)
	add(strings.NewReplacer("&#34;", "&quot;", "&#39;", "&#x27;").Replace(h))
	add(strings.NewReplacer("&#34;", "&quot;", "&#39;", "&apos;").Replace(h))
	return forms
}

// lowerHexEscapes rewrites %2F as %2f.
func lowerHexEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if b[j] >= 'A' && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
		}
	}
	return string(b)
}

// jsonEscape returns s as the body of a JSON string literal.
func jsonEscape(s string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		return s
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

// jsonASCII returns s as the body of a JSON string literal in which every
// non-ASCII rune is a \u escape, as many non-Go encoders write it.
func jsonASCII(s string) string {
	var b strings.Builder
	for _, r := range jsonEscape(s, true) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			writeU4(&b, 0xD800+(r>>10))
			writeU4(&b, 0xDC00+(r&0x3FF))
		default:
			writeU4(&b, r)
		}
	}
	return b.String()
}

func writeU4(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xF])
	}
}

// interval is a half-open byte range [start, end) of a text.
type interval struct{ start, end int }

// matcher finds every occurrence of a fixed set of byte strings. It is
// immutable and safe for concurrent use.
//
// Patterns live in chunks, each an Aho-Corasick automaton compiled to a
// dense DFA over byte classes. New patterns go to the last chunk, which is
// rebuilt alone and sealed before its table would pass chunkBudget entries, so
// registering a literal costs at most one chunk's build however many came
// before, memory stays bounded, and a scan makes one pass per chunk (one
// pass for any realistic number of literals).
type matcher struct {
	sealed []*dfa
	// tail holds the patterns of the last, unsealed chunk; tailDFA is
	// compiled from them.
	tail    []string
	tailDFA *dfa
	// long holds patterns too long for a DFA; they are found with
	// strings.Index.
	long []string
}

const (
	// chunkBudget bounds one DFA's table (entries of 4 bytes).
	chunkBudget = 1 << 20
	// maxDFAPattern is the longest pattern compiled into a DFA.
	maxDFAPattern = 256
)

// dfa is one compiled chunk. Row r starts at delta[r*(nclass+1)]; its first
// nclass entries are the row offsets of the next states by byte class, its
// last entry the length of the longest pattern ending in that state (0 for
// none).
type dfa struct {
	class  [256]uint16
	nclass int
	delta  []int32
	// first marks the bytes that begin a pattern; in the start state every
	// other byte is skipped without a transition. When only one byte begins
	// a pattern, only is that byte and onlyOne is set.
	first   [256]bool
	only    byte
	onlyOne bool
	// pair, when every pattern has two bytes or more, holds the first two
	// bytes of each: in the start state a byte followed by a byte no
	// pattern starts with is skipped.
	pair *pairSet
}

// pairSet is a set of byte pairs.
type pairSet [1 << 10]uint64

func (p *pairSet) add(a, b byte) { k := uint(a)<<8 | uint(b); p[k>>6] |= 1 << (k & 63) }

func (p *pairSet) has(a, b byte) bool {
	k := uint(a)<<8 | uint(b)
	return p[k>>6]&(1<<(k&63)) != 0
}

// with returns a matcher that also finds patterns. m may be nil.
func (m *matcher) with(patterns []string) *matcher {
	out := &matcher{}
	if m != nil {
		out.sealed = m.sealed[:len(m.sealed):len(m.sealed)]
		out.tail = m.tail[:len(m.tail):len(m.tail)]
		out.long = m.long[:len(m.long):len(m.long)]
	}
	// Estimate the tail's table as states × (classes + 1) and seal it before
	// a pattern would push it past the budget.
	var seen [256]bool
	states, classes := 1, 1
	count := func(p string, mark bool) int {
		n := 0
		for i := 0; i < len(p); i++ {
			if !seen[p[i]] {
				n++
				if mark {
					seen[p[i]] = true
				}
			}
		}
		return n
	}
	for _, p := range out.tail {
		classes += count(p, true)
		states += len(p)
	}
	for _, p := range patterns {
		switch {
		case p == "":
			continue
		case len(p) > maxDFAPattern:
			out.long = append(out.long, p)
			continue
		}
		if len(out.tail) > 0 && (states+len(p))*(classes+count(p, false)+1) > chunkBudget {
			out.sealed = append(out.sealed, buildDFA(out.tail))
			out.tail, seen, states, classes = nil, [256]bool{}, 1, 1
		}
		classes += count(p, true)
		states += len(p)
		out.tail = append(out.tail, p)
	}
	if len(out.tail) > 0 {
		out.tailDFA = buildDFA(out.tail)
	}
	return out
}

func (m *matcher) chunks() []*dfa {
	if m.tailDFA == nil {
		return m.sealed
	}
	return append(m.sealed[:len(m.sealed):len(m.sealed)], m.tailDFA)
}

func buildDFA(patterns []string) *dfa {
	d := &dfa{pair: &pairSet{}}
	nfirst := 0
	for _, p := range patterns {
		if len(p) < 2 {
			d.pair = nil
		} else if d.pair != nil {
			d.pair.add(p[0], p[1])
		}
		if !d.first[p[0]] {
			d.first[p[0]] = true
			d.only = p[0]
			nfirst++
		}
		for i := 0; i < len(p); i++ {
			if d.class[p[i]] == 0 {
				d.nclass++
				d.class[p[i]] = uint16(d.nclass)
			}
		}
	}
	d.onlyOne = nfirst == 1
	d.nclass++ // class 0: every byte that occurs in no pattern
	nc := d.nclass
	w := nc + 1
	newRow := func() int32 {
		r := int32(len(d.delta))
		for i := 0; i < nc; i++ {
			d.delta = append(d.delta, -1)
		}
		d.delta = append(d.delta, 0)
		return r
	}
	d.delta = make([]int32, 0, (1+totalLen(patterns))*w)
	newRow()
	for _, p := range patterns {
		row := int32(0)
		for i := 0; i < len(p); i++ {
			c := int(d.class[p[i]])
			if d.delta[int(row)+c] < 0 {
				nr := newRow()
				d.delta[int(row)+c] = nr
			}
			row = d.delta[int(row)+c]
		}
		if int32(len(p)) > d.delta[int(row)+nc] {
			d.delta[int(row)+nc] = int32(len(p))
		}
	}
	// Breadth first: fill missing transitions from the failure state and
	// inherit the longest match ending at the failure state. fail is indexed
	// by state number (row offset / w).
	fail := make([]int32, len(d.delta)/w)
	var queue []int32
	for c := 0; c < nc; c++ {
		next := d.delta[c]
		if next < 0 {
			d.delta[c] = 0
			continue
		}
		fail[int(next)/w] = 0
		queue = append(queue, next)
	}
	for len(queue) > 0 {
		row := queue[0]
		queue = queue[1:]
		f := fail[int(row)/w]
		for c := 0; c < nc; c++ {
			next := d.delta[int(row)+c]
			if next < 0 {
				d.delta[int(row)+c] = d.delta[int(f)+c]
				continue
			}
			nf := d.delta[int(f)+c]
			fail[int(next)/w] = nf
			if d.delta[int(nf)+nc] > d.delta[int(next)+nc] {
				d.delta[int(next)+nc] = d.delta[int(nf)+nc]
			}
			queue = append(queue, next)
		}
	}
	return d
}

func totalLen(ps []string) int {
	n := 0
	for _, p := range ps {
		n += len(p)
	}
	return n
}

// find returns the sorted, disjoint union of every match in s. Touching
// matches are merged, so "secretsecret" becomes one interval.
func (m *matcher) find(s string) []interval {
	if m == nil || s == "" {
		return nil
	}
	chunks := m.chunks()
	var all []interval
	for _, d := range chunks {
		all = d.scan(s, all)
	}
	for _, p := range m.long {
		for off := 0; ; {
			i := strings.Index(s[off:], p)
			if i < 0 {
				break
			}
			all = append(all, interval{off + i, off + i + len(p)})
			off += i + 1
		}
	}
	if len(chunks)+len(m.long) > 1 {
		sort.Slice(all, func(i, j int) bool { return all[i].start < all[j].start })
		out := all[:0]
		for _, iv := range all {
			if n := len(out); n > 0 && iv.start <= out[n-1].end {
				out[n-1].end = max(out[n-1].end, iv.end)
				continue
			}
			out = append(out, iv)
		}
		all = out
	}
	return all
}

// scan appends the union of d's matches in s to out. Matches are reported in
// order of their end; a longer match may start before earlier ones, so it
// absorbs them.
func (d *dfa) scan(s string, out []interval) []interval {
	nc := d.nclass
	delta := d.delta
	class := &d.class
	base := len(out)
	first := &d.first
	row := int32(0)
	pair := d.pair
	for i := 0; i < len(s); i++ {
		if row == 0 {
			// In the start state only a pattern's first byte (and, when
			// every pattern has two, its first two) leads anywhere.
			for {
				if d.onlyOne {
					k := strings.IndexByte(s[i:], d.only)
					if k < 0 {
						i = len(s)
						break
					}
					i += k
				} else {
					for i < len(s) && !first[s[i]] {
						i++
					}
				}
				if i == len(s) || pair == nil || i+1 < len(s) && pair.has(s[i], s[i+1]) {
					break
				}
				i++
			}
			if i == len(s) {
				break
			}
		}
		row = delta[int(row)+int(class[s[i]])]
		if n := delta[int(row)+nc]; n > 0 {
			iv := interval{i + 1 - int(n), i + 1}
			for len(out) > base && iv.start <= out[len(out)-1].end {
				iv.start = min(iv.start, out[len(out)-1].start)
				out = out[:len(out)-1]
			}
			out = append(out, iv)
		}
	}
	return out
}
