package targeting

import (
	"regexp"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// maxCachedRegexps bounds the compiled-pattern cache.
const maxCachedRegexps = 256

type reEntry struct {
	re  *regexp.Regexp
	err error
}

var reCache = struct {
	sync.Mutex
	m map[string]reEntry
}{m: make(map[string]reEntry)}

// compile returns the compiled pattern, from a small bounded cache shared by
// all calls (a *regexp.Regexp is safe for concurrent use). Failures are
// cached too.
func compile(pattern string) (*regexp.Regexp, error) {
	reCache.Lock()
	e, ok := reCache.m[pattern]
	reCache.Unlock()
	if ok {
		return e.re, e.err
	}
	re, err := regexp.Compile(pattern)
	reCache.Lock()
	if len(reCache.m) >= maxCachedRegexps {
		for k := range reCache.m {
			delete(reCache.m, k)
			break
		}
	}
	reCache.m[pattern] = reEntry{re, err}
	reCache.Unlock()
	return re, err
}

// lastElem returns the last element of a frame path ("outer/inner" ->
// "inner").
func lastElem(frame string) string {
	for i := len(frame) - 1; i >= 0; i-- {
		if frame[i] == '/' {
			return frame[i+1:]
		}
	}
	return frame
}

// frameIs reports whether a node in frame lies in the frame named want.
func frameIs(frame, want string) bool {
	return frame == want || lastElem(frame) == want
}

// frameAliases appends to dst the paths of the frames of s that want names
// by title rather than by name or id, Fold-equal: the frame's Title (the
// owner iframe's title attribute, as the adapter reports it), the name of
// the frame's root document node (the framed page's own title), or, in a
// snapshot that still links a frame's root under its iframe node (a raw,
// unnormalised one), that iframe node's accessible name.
func frameAliases(dst []string, s *domain.UiSnapshot, want string) []string {
	if s == nil {
		return dst
	}
	fw := perception.Fold(want)
	if fw == "" {
		return dst
	}
	for i := range s.Frames {
		f := &s.Frames[i]
		if f.Path == "" {
			continue
		}
		ok := f.Title != "" && perception.FoldEqual(f.Title, fw)
		if !ok && f.Root >= 0 && f.Root < len(s.Nodes) {
			root := &s.Nodes[f.Root]
			ok = root.Name != "" && perception.FoldEqual(root.Name, fw)
			if p := root.Parent; !ok && p >= 0 && p < len(s.Nodes) && perception.CanonicalRole(s.Nodes[p].Role) == "iframe" {
				ok = perception.FoldEqual(s.Nodes[p].Name, fw)
			}
		}
		if ok {
			dst = append(dst, f.Path)
		}
	}
	return dst
}

// inFrame reports whether a node in frame lies in the frame named want,
// by name or path (frameIs) or through one of the alias paths.
func inFrame(frame, want string, aliases []string) bool {
	if frameIs(frame, want) {
		return true
	}
	for _, a := range aliases {
		if frame == a {
			return true
		}
	}
	return false
}
