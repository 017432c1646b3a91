package redact

import (
	"slices"
	"strings"
)

// Kinds Find reports besides the patterns'.
const (
	// KindLiteral: a registered literal, one of its encoded forms, its
	// folded or cut forms, or a 12-rune fragment of it (see
	// Redactor.RegisterLiteral).
	KindLiteral Kind = "literal"
	// KindPrivateKey: a PEM private key block header (five dashes, BEGIN,
	// a key type, PRIVATE KEY, five dashes).
	KindPrivateKey Kind = "private_key"
)

// Finding is one secret-shaped or registered thing in a text: the byte
// range [Start, End) and what it is. It never holds the text itself.
type Finding struct {
	Start, End int
	Kind       Kind
}

// Find returns what String would redact in s, and PEM private key headers,
// in order of their start: registered literals (and fragments) as
// KindLiteral, pattern matches with their kind. Literal matches hide any
// pattern match inside them, as in String.
func (r *Redactor) Find(s string) []Finding {
	var out []Finding
	lits := r.literalIntervals(s)
	for _, iv := range lits {
		out = append(out, Finding{Start: iv.start, End: iv.end, Kind: KindLiteral})
	}
	inLiteral := func(start int) bool {
		i, _ := slices.BinarySearchFunc(lits, start, func(iv interval, p int) int {
			if iv.end <= p {
				return -1
			}
			if iv.start > p {
				return 1
			}
			return 0
		})
		return i < len(lits) && lits[i].start <= start && start < lits[i].end
	}
	for _, sp := range r.scan(s) {
		if inLiteral(sp.start) {
			continue
		}
		k := KindAccount
		if rest, ok := strings.CutPrefix(sp.repl, "[REDACTED:"); ok {
			k = Kind(strings.TrimSuffix(rest, "]"))
		}
		out = append(out, Finding{Start: sp.start, End: sp.end, Kind: k})
	}
	for off := 0; ; {
		i := strings.Index(s[off:], "-----BEGIN ")
		if i < 0 {
			break
		}
		start := off + i
		line := s[start:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		if strings.Contains(line, "PRIVATE KEY-----") && !inLiteral(start) {
			out = append(out, Finding{Start: start, End: start + len(line), Kind: KindPrivateKey})
		}
		off = start + len("-----BEGIN ")
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return a.Start - b.Start })
	return out
}
