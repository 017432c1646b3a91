package targeting

import (
	"regexp"
	"sync"
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
