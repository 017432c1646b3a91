package redact

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Literals shorter than FragmentLen are matched by a second automaton over
// folded text (case folded, whitespace dropped, see normRune): the whole
// literal and, per the cut rules below, the literal with a character or two
// cut from either end. Literals of FragmentLen runes or more are folded by
// the fragment index, whose windows cover the whole literal and any cut
// that leaves FragmentLen runes; the automaton adds their shorter cuts.
const (
	// CutMinLen is the shortest literal, in folded runes, that is also
	// matched with up to two characters cut from its ends in all (one or
	// two from the start, the end, or one from each): "Pass-1234" is
	// caught in "ass-123" and "PASS-12".
	CutMinLen = 8
	// ShortCutMinLen is the shortest literal cut at all: a literal of
	// ShortCutMinLen to CutMinLen-1 folded runes is also matched with one
	// character cut from either end, when what is left holds a letter and
	// a digit ("OP1001" is caught in "OP100" and "p1001", a PIN "482913" is
	// not cut, nor "hunter2" to the word "hunter").
	ShortCutMinLen = 6
)

// foldRing bounds the longest folded pattern, in bytes (a whole or cut
// literal is at most (FragmentLen-1)*utf8.UTFMax bytes; hex and
// percent-encoded forms longer than this are matched exactly, since a
// folded pattern must fit one automaton).
const foldRing = maxDFAPattern

// foldDrop and foldWide mark whitespace (dropped) and non-ASCII bytes
// (decoded) in foldTab.
const (
	foldDrop = 0x100
	foldWide = 0x200
)

// foldTab folds one ASCII byte: lower case, foldDrop for whitespace,
// foldWide for bytes of non-ASCII runes.
var foldTab = func() (t [256]uint16) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = foldWide
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			t[c] = foldDrop
		case c >= 'A' && c <= 'Z':
			t[c] = uint16(c + ('a' - 'A'))
		default:
			t[c] = uint16(c)
		}
	}
	return t
}()

// foldForms returns the folded patterns of a literal whose folded form is
// n: n itself when it is shorter than FragmentLen, and its cuts (see
// CutMinLen and ShortCutMinLen) shorter than FragmentLen.
func foldForms(n []rune) []string {
	var out []string
	add := func(rs []rune) {
		s := string(rs)
		for _, f := range out {
			if f == s {
				return
			}
		}
		out = append(out, s)
	}
	l := len(n)
	if l < FragmentLen {
		add(n)
	}
	switch {
	case l >= CutMinLen:
		for cut := 1; cut <= 2; cut++ {
			for head := 0; head <= cut; head++ {
				if rest := n[head : l-(cut-head)]; len(rest) < FragmentLen {
					add(rest)
				}
			}
		}
	case l >= ShortCutMinLen:
		for _, rest := range [][]rune{n[1:], n[:l-1]} {
			if hasLetterAndDigit(rest) {
				add(rest)
			}
		}
	}
	return out
}

func hasLetterAndDigit(rs []rune) bool {
	var letter, digit bool
	for _, r := range rs {
		letter = letter || unicode.IsLetter(r)
		digit = digit || unicode.IsDigit(r)
	}
	return letter && digit
}

// encodedForms returns the byte encodings of lit that a sink may hold
// instead of lit. exact are matched as they are: base64 (standard and URL
// alphabets, padded and not, and, for a literal inside a longer encoded
// value, the characters that encode only the literal's own bytes at each
// of the three alignments when there are at least minInner of them).
// folded are matched folded (any case, blanks between): hex and every
// byte percent-encoded; when one is longer than a folded pattern may be,
// its lower- and upper-case spellings go to exact instead.
func encodedForms(lit string) (exact, folded []string) {
	const minInner = 6
	b := []byte(lit)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		full := enc.EncodeToString(b)
		exact = append(exact, full, strings.TrimRight(full, "="))
		// At offset k in a longer value, the literal's bits run from 8k to
		// 8(k+len); a base64 character i covers bits 6i..6i+6.
		for k := 1; k <= 2; k++ {
			e := enc.EncodeToString(append(make([]byte, k), b...))
			first := (8*k + 5) / 6
			last := (8*(k+len(b)))/6 - 1
			if last-first+1 >= minInner {
				exact = append(exact, e[first:last+1])
			}
		}
		// Offset 0 inside a longer value: all but a trailing character
		// that mixes in the next byte.
		if n := (8 * len(b)) / 6; n >= minInner && n < len(strings.TrimRight(full, "=")) {
			exact = append(exact, full[:n])
		}
	}
	h := hex.EncodeToString(b)
	var pct strings.Builder
	for i := 0; i < len(h); i += 2 {
		pct.WriteString("%" + h[i:i+2])
	}
	for _, f := range []string{h, pct.String()} {
		if len(f) <= foldRing {
			folded = append(folded, f)
			continue
		}
		exact = append(exact, f, strings.ToUpper(f))
	}
	return dedupe(exact), folded
}

func dedupe(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// findFolded returns the sorted, disjoint byte intervals of s where a
// pattern of m (folded patterns, see foldForms) occurs in the folded text.
// A match that spans whitespace counts only when it stands alone: no letter
// or digit right before it or right after it, so "O P 1 0 0 1" is a match
// of OP1001 and "stop 1001" is not.
func (m *matcher) findFolded(s string) []interval {
	if m == nil || s == "" {
		return nil
	}
	chunks := m.chunks()
	var all []interval
	for _, d := range chunks {
		all = d.scanFolded(s, all)
	}
	if len(chunks) > 1 {
		all = sortMerge(all)
	}
	return all
}

// sortMerge sorts ivs by start and merges overlapping and touching ones.
func sortMerge(ivs []interval) []interval {
	if len(ivs) < 2 {
		return ivs
	}
	return mergeIntervals(ivs[:1], ivs[1:])
}

// scanFolded is scan over the folded text of s: ASCII upper case is
// lowered, non-ASCII runes are lowered (unicode.ToLower) and whitespace is
// skipped; matches are reported as byte ranges of s. It keeps no history:
// a match, which is rare, is walked back from its end (foldedMatch).
func (d *dfa) scanFolded(s string, out []interval) []interval {
	nc := d.nclass
	delta := d.delta
	class := &d.class
	first := &d.first
	pair := d.pair
	base := len(out)
	var (
		row  int32
		wide [utf8.UTFMax]byte
	)
	for i := 0; i < len(s); {
		if row == 0 {
			// In the start state only a pattern's first two bytes lead
			// anywhere; whitespace before a match does not matter.
			for ; i < len(s); i++ {
				t := foldTab[s[i]]
				if t == foldWide {
					break
				}
				if t >= 0x100 || !first[t] {
					continue
				}
				if pair == nil {
					break
				}
				if i+1 == len(s) {
					continue
				}
				if u := foldTab[s[i+1]]; u >= 0x100 || pair.has(byte(t), byte(u)) {
					break
				}
			}
			if i == len(s) {
				break
			}
		}
		var n int32
		if t := foldTab[s[i]]; t < 0x100 {
			i++
			row = delta[int(row)+int(class[t])]
			n = delta[int(row)+nc]
		} else if t == foldDrop {
			i++
			continue
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			if unicode.IsSpace(r) {
				continue
			}
			k := utf8.EncodeRune(wide[:], unicode.ToLower(r))
			if row == 0 && !first[wide[0]] {
				continue
			}
			for _, b := range wide[:k] {
				row = delta[int(row)+int(class[b])]
			}
			n = delta[int(row)+nc] // a match ends on a rune's last byte
		}
		if n == 0 {
			continue
		}
		iv, ok := foldedMatch(s, d, int(n), i)
		if !ok {
			continue
		}
		for len(out) > base && iv.start <= out[len(out)-1].end {
			iv.start = min(iv.start, out[len(out)-1].start)
			iv.end = max(iv.end, out[len(out)-1].end)
			out = out[:len(out)-1]
		}
		out = append(out, iv)
	}
	return out
}

// foldedBack walks s back from end over n folded bytes and returns where
// they start in s and whether whitespace lies among them.
func foldedBack(s string, n, end int) (start int, spaced bool) {
	var wide [utf8.UTFMax]byte
	start = end
	for n > 0 && start > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:start])
		start -= size
		if r < utf8.RuneSelf && foldTab[r] == foldDrop || r >= utf8.RuneSelf && unicode.IsSpace(r) {
			spaced = true
			continue
		}
		n -= utf8.EncodeRune(wide[:], unicode.ToLower(r))
	}
	return start, spaced
}

// foldedMatch checks the longest match, n folded bytes ending at end,
// and, when it spans whitespace without standing alone, each shorter
// pattern ending there.
func foldedMatch(s string, d *dfa, n, end int) (interval, bool) {
	start, spaced := foldedBack(s, n, end)
	iv := interval{start, end}
	if !spaced || standsAlone(s, iv) {
		return iv, true
	}
	folded := []byte(string(normalizeFragment(s[start:end])))
	for l := n - 1; l > 0; l-- {
		if l > len(folded) || !d.matchesWhole(folded[len(folded)-l:]) {
			continue
		}
		start, spaced := foldedBack(s, l, end)
		if iv := (interval{start, end}); !spaced || standsAlone(s, iv) {
			return iv, true
		}
	}
	return interval{}, false
}

// matchesWhole reports whether p is one of d's patterns: walking it from
// the start state ends in a state whose longest match is all of p.
func (d *dfa) matchesWhole(p []byte) bool {
	row := int32(0)
	for _, b := range p {
		c := d.class[b]
		if c == 0 {
			return false
		}
		row = d.delta[int(row)+int(c)]
	}
	return int(d.delta[int(row)+d.nclass]) == len(p)
}

// standsAlone reports whether no letter or digit touches iv in s.
func standsAlone(s string, iv interval) bool {
	alnum := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	if iv.start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:iv.start]); alnum(r) {
			return false
		}
	}
	if iv.end < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[iv.end:]); alnum(r) {
			return false
		}
	}
	return true
}
