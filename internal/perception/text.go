package perception

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cuahq/cua/internal/domain"
)

// MaxText bounds what [Text] returns, in bytes.
const MaxText = 4 << 10

// invisible reports whether r is a format or control character that takes
// no space on screen (zero-width space and joiners, word joiner, BOM, soft
// hyphen, bidi marks, C0/C1 controls other than whitespace).
func invisible(r rune) bool {
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r)
}

// CleanName returns s with every Unicode space (NBSP included) turned into
// one ASCII space, runs of spaces collapsed, leading and trailing space
// trimmed, and zero-width and other invisible format characters removed.
// It returns s itself (no allocation) when s is already clean.
func CleanName(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			pending = b.Len() > 0
		case invisible(r):
		default:
			if pending {
				b.WriteByte(' ')
				pending = false
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isClean reports whether s is printable ASCII with single inner spaces.
func isClean(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prev := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || (c == ' ' && prev == ' ') {
			return false
		}
		prev = c
	}
	return true
}

// blank reports whether CleanName(s) would be empty.
func blank(s string) bool {
	if s != "" && s[0] > ' ' && s[0] < 0x7f {
		return false
	}
	for _, r := range s {
		if !unicode.IsSpace(r) && !invisible(r) {
			return false
		}
	}
	return true
}

// Rune classes for folding.
const (
	foldDrop  = iota // punctuation, symbols, invisible characters
	foldSpace        // any Unicode space
	foldKeep         // letters, numbers, combining marks
)

// asciiFold maps an ASCII byte to its folded byte, ' ' for whitespace, or 0
// for a byte that folding drops.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := 0; c < utf8.RuneSelf; c++ {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = byte(c)
		case 'A' <= c && c <= 'Z':
			t[c] = byte(c + 'a' - 'A')
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
			t[c] = ' '
		}
	}
	return t
}()

// foldRune classifies r and returns its case-folded form. Folding is
// unicode.ToLower(unicode.ToUpper(r)), so that every member of a simple case
// orbit (K, k, KELVIN SIGN; S, s, LONG S; Σ, σ, ς) folds to one rune.
func foldRune(r rune) (rune, int) {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r, foldKeep
		case 'A' <= r && r <= 'Z':
			return r + ('a' - 'A'), foldKeep
		case r == ' ', r == '\t', r == '\n', r == '\r', r == '\v', r == '\f':
			return r, foldSpace
		}
		return r, foldDrop
	}
	switch {
	case unicode.IsSpace(r):
		return r, foldSpace
	case unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r):
		return unicode.ToLower(unicode.ToUpper(r)), foldKeep
	}
	return r, foldDrop
}

// Fold returns the ladder's "normalized" form of s: case folded, every
// character that is not a letter, number, combining mark or space removed
// (punctuation is deleted, not replaced: "Sign-in" folds to "signin"), and
// whitespace collapsed and trimmed. It returns s itself when s is already
// folded.
func Fold(s string) string {
	if isFolded(s) {
		return s
	}
	var buf [64]byte
	return string(AppendFold(buf[:0], s))
}

// isFolded reports whether s is lowercase ASCII letters and digits with
// single inner spaces.
func isFolded(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prev := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == ' ' && prev != ' ':
		default:
			return false
		}
		prev = c
	}
	return true
}

// AppendFold appends Fold(s) to dst and returns the extended buffer.
func AppendFold(dst []byte, s string) []byte {
	start := len(dst)
	pending := false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			switch f := asciiFold[c]; f {
			case 0:
			case ' ':
				pending = len(dst) > start
			default:
				if pending {
					dst = append(dst, ' ')
					pending = false
				}
				dst = append(dst, f)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		f, class := foldRune(r)
		switch class {
		case foldSpace:
			pending = len(dst) > start
		case foldKeep:
			if pending {
				dst = append(dst, ' ')
				pending = false
			}
			if f < utf8.RuneSelf {
				dst = append(dst, byte(f))
			} else {
				dst = utf8.AppendRune(dst, f)
			}
		}
	}
	return dst
}

// FoldEqual reports whether Fold(s) == folded, without allocating and
// stopping at the first difference. folded must itself be folded.
func FoldEqual(s, folded string) bool {
	j := 0
	pending := false
	started := false
	var enc [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			switch f := asciiFold[c]; f {
			case 0:
			case ' ':
				pending = started
			default:
				if pending {
					if j >= len(folded) || folded[j] != ' ' {
						return false
					}
					j++
					pending = false
				}
				if j >= len(folded) || folded[j] != f {
					return false
				}
				j++
				started = true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		f, class := foldRune(r)
		switch class {
		case foldSpace:
			pending = started
			continue
		case foldDrop:
			continue
		}
		if pending {
			if j >= len(folded) || folded[j] != ' ' {
				return false
			}
			j++
			pending = false
		}
		if f < utf8.RuneSelf {
			if j >= len(folded) || folded[j] != byte(f) {
				return false
			}
			j++
		} else {
			n := utf8.EncodeRune(enc[:], f)
			if j+n > len(folded) || folded[j:j+n] != string(enc[:n]) {
				return false
			}
			j += n
		}
		started = true
	}
	return j == len(folded)
}

// Text returns the visible text of node i: its name when it has one, else
// (for a text node) its value, else the space-joined names (or values) of
// its descendant text nodes in document order. The result is at most
// [MaxText] bytes. It returns "" for an index out of range.
func Text(s *domain.UiSnapshot, i int) string {
	if s == nil || i < 0 || i >= len(s.Nodes) {
		return ""
	}
	if n := &s.Nodes[i]; n.Name != "" && len(n.Name) <= MaxText {
		return n.Name
	}
	var buf [128]byte
	return string(AppendText(buf[:0], s, i))
}

// AppendText appends Text(s, i) to dst and returns the extended buffer.
func AppendText(dst []byte, s *domain.UiSnapshot, i int) []byte {
	return appendText(dst, s, i, false)
}

// TextFoldEqual reports whether Fold(Text(s, i)) == folded. It folds the
// text piece by piece into buf (returned for reuse) and stops at the first
// piece that departs from folded, so a long text costs little.
func TextFoldEqual(buf []byte, s *domain.UiSnapshot, i int, folded string) (bool, []byte) {
	if s == nil || i < 0 || i >= len(s.Nodes) {
		return folded == "", buf
	}
	w := textWriter{dst: buf[:0], fold: true, want: folded, cmp: true, budget: len(s.Nodes)}
	w.node(s, i)
	return !w.differs && string(w.dst) == folded, w.dst
}

func appendText(dst []byte, s *domain.UiSnapshot, i int, fold bool) []byte {
	if s == nil || i < 0 || i >= len(s.Nodes) {
		return dst
	}
	w := textWriter{dst: dst, start: len(dst), fold: fold, budget: len(s.Nodes)}
	w.node(s, i)
	return w.dst
}

func (w *textWriter) node(s *domain.UiSnapshot, i int) {
	n := &s.Nodes[i]
	switch {
	case n.Name != "":
		w.add(n.Name)
	case n.Role == "text" && n.Value != "":
		w.add(n.Value)
	default:
		w.walk(s, i, 0)
	}
}

// textWriter joins text pieces, bounded in size and in nodes visited (so a
// cyclic or malformed tree cannot loop).
type textWriter struct {
	dst    []byte
	start  int
	fold   bool
	budget int
	// With cmp, the writer stops as soon as dst is no longer a prefix of
	// want, and sets differs.
	want    string
	cmp     bool
	differs bool
}

const maxTextDepth = 512

func (w *textWriter) full() bool {
	return len(w.dst)-w.start >= MaxText || w.budget <= 0 || w.differs
}

func (w *textWriter) walk(s *domain.UiSnapshot, i, depth int) {
	if depth > maxTextDepth {
		return
	}
	for _, c := range s.Nodes[i].Children {
		if w.full() {
			return
		}
		if c < 0 || c >= len(s.Nodes) || c == i {
			continue
		}
		w.budget--
		n := &s.Nodes[c]
		if n.Role == "text" {
			if n.Name != "" {
				w.add(n.Name)
			} else if n.Value != "" {
				w.add(n.Value)
			}
		}
		w.walk(s, c, depth+1)
	}
}

func (w *textWriter) add(piece string) {
	mark := len(w.dst)
	if mark > w.start {
		w.dst = append(w.dst, ' ')
	}
	if w.fold {
		w.dst = AppendFold(w.dst, piece)
		if len(w.dst) == mark+1 && mark > w.start {
			w.dst = w.dst[:mark]
		}
	} else {
		w.dst = append(w.dst, piece...)
	}
	if w.cmp && (len(w.dst) > len(w.want) || string(w.dst) != w.want[:len(w.dst)]) {
		w.differs = true
	}
	if len(w.dst)-w.start > MaxText {
		cut := w.start + MaxText
		for cut > w.start && !utf8.RuneStart(w.dst[cut]) {
			cut--
		}
		w.dst = w.dst[:cut]
	}
}
