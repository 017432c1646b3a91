package redact

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FragmentLen is the length, in runes after normalisation, of the shortest
// piece of a registered literal that is redacted on its own. A literal at
// least this long is also caught when a page transformed it: any run of
// FragmentLen or more of its characters, compared after folding case and
// dropping whitespace ("Teller-Pass-1234" is caught in "…TELLER-PASS-12…"
// and in "teller - pass - 1234 5"). Shorter literals are matched whole, as
// before.
const FragmentLen = 12

// fragmentIndex holds every FragmentLen-rune window of the normalised
// literals, by rolling hash. It is immutable once built and safe for
// concurrent use.
type fragmentIndex struct {
	// filter has bit h&filterMask set for every window hash h; most text
	// positions are rejected by one bit test.
	filter []uint64
	// windows maps a window's hash to the windows with that hash.
	windows map[uint64][][FragmentLen]rune
	// sources are the normalised literals indexed so far.
	sources [][]rune
}

const (
	ringSize   = 16 // a power of two >= FragmentLen
	ringMask   = ringSize - 1
	filterBits = 1 << 16
	filterMask = filterBits - 1
	// fragBase is the rolling hash's multiplier (arithmetic mod 2^64).
	fragBase = 0x100000001b3
)

// fragPow is fragBase^(FragmentLen-1) mod 2^64, to drop the oldest rune.
var fragPow = func() uint64 {
	p := uint64(1)
	for range FragmentLen - 1 {
		p *= fragBase
	}
	return p
}()

// normRune folds r for fragment matching; ok is false for whitespace,
// which normalisation drops.
func normRune(r rune) (rune, bool) {
	if r < utf8.RuneSelf {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f':
			return 0, false
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A'), true
		}
		return r, true
	}
	if unicode.IsSpace(r) {
		return 0, false
	}
	return unicode.ToLower(r), true
}

// normalizeFragment returns s case-folded with whitespace dropped.
func normalizeFragment(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if n, ok := normRune(r); ok {
			out = append(out, n)
		}
	}
	return out
}

// with returns an index that also holds lits' windows; literals shorter
// than FragmentLen after normalisation add nothing. x may be nil; the
// result is nil when no literal is long enough.
func (x *fragmentIndex) with(lits []string) *fragmentIndex {
	var add [][]rune
	for _, l := range lits {
		if n := normalizeFragment(l); len(n) >= FragmentLen {
			add = append(add, n)
		}
	}
	if len(add) == 0 {
		return x
	}
	out := &fragmentIndex{filter: make([]uint64, filterBits/64), windows: map[uint64][][FragmentLen]rune{}}
	if x != nil {
		copy(out.filter, x.filter)
		for h, ws := range x.windows {
			out.windows[h] = slices.Clone(ws)
		}
		out.sources = slices.Clone(x.sources)
	}
	for _, n := range add {
		out.sources = append(out.sources, n)
		for i := 0; i+FragmentLen <= len(n); i++ {
			var w [FragmentLen]rune
			copy(w[:], n[i:i+FragmentLen])
			h := hashWindow(w[:])
			if !slices.Contains(out.windows[h], w) {
				out.windows[h] = append(out.windows[h], w)
			}
			out.filter[(h&filterMask)/64] |= 1 << (h & 63)
		}
	}
	return out
}

func hashWindow(w []rune) uint64 {
	var h uint64
	for _, r := range w {
		h = h*fragBase + uint64(r)
	}
	return h
}

// find returns the sorted, disjoint byte intervals of s covering every
// FragmentLen-rune normalised window of s that is a window of an indexed
// literal. Each interval runs from the first byte of the window's first
// rune to the last byte of its last rune, so whitespace inside a match is
// covered too. It is one pass over s with a rolling hash.
func (x *fragmentIndex) find(s string) []interval {
	if x == nil || len(s) < FragmentLen {
		return nil
	}
	// ring holds the last ringSize normalised runes and the byte offsets
	// where they start; a window is the last FragmentLen of them.
	var (
		ring   [ringSize]rune
		starts [ringSize]int
		pos    int // runes seen after normalisation
		h      uint64
		out    []interval
	)
	filter := x.filter
	for i := 0; i < len(s); {
		start := i
		c := s[i]
		var n rune
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				continue
			case c >= 'A' && c <= 'Z':
				n = rune(c + ('a' - 'A'))
			default:
				n = rune(c)
			}
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			var ok bool
			if n, ok = normRune(r); !ok {
				continue
			}
		}
		if pos >= FragmentLen {
			h -= uint64(ring[(pos-FragmentLen)&ringMask]) * fragPow
		}
		h = h*fragBase + uint64(n)
		ring[pos&ringMask] = n
		starts[pos&ringMask] = start
		pos++
		if pos < FragmentLen || filter[(h&filterMask)>>6]&(1<<(h&63)) == 0 {
			continue
		}
		cands := x.windows[h]
		if len(cands) == 0 {
			continue
		}
		var w [FragmentLen]rune
		first := pos - FragmentLen
		for k := range FragmentLen {
			w[k] = ring[(first+k)&ringMask]
		}
		if !slices.Contains(cands, w) {
			continue
		}
		iv := interval{starts[first&ringMask], i}
		if k := len(out); k > 0 && iv.start <= out[k-1].end {
			out[k-1].end = max(out[k-1].end, iv.end)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// mergeIntervals returns the sorted, disjoint union of a and b, each
// already sorted and disjoint.
func mergeIntervals(a, b []interval) []interval {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	all := append(slices.Clone(a), b...)
	slices.SortFunc(all, func(x, y interval) int { return x.start - y.start })
	out := all[:0]
	for _, iv := range all {
		if n := len(out); n > 0 && iv.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, iv.end)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// Reveals reports whether text holds any of secrets under the rules a
// Redactor applies to a registered literal (see RegisterLiteral): whole,
// in an encoded form, folded (case, whitespace), cut at its ends or, for a
// secret of FragmentLen or more runes, any FragmentLen-rune run of it. A
// secret of any length counts, even one too short for a Redactor's
// minimum. It is the read-back guard's matcher: an engine refuses to
// extract or echo a text that reveals a secret it typed. Empty secrets are
// ignored.
func Reveals(text string, secrets ...string) bool {
	var lits []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if strings.Contains(text, s) {
			return true
		}
		lits = append(lits, s)
	}
	if len(lits) == 0 {
		return false
	}
	return len(New(WithMinLiteralLength(1), WithLiterals(lits...)).literalIntervals(text)) > 0
}
