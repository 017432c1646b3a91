package cassette

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// excerpt is how many bytes around a difference a mismatch quotes.
const excerpt = 40

// describe names the fields in which live differs from recorded, with
// where each first differs.
func describe(recorded, live request) string {
	var diffs []string
	text := func(name, a, b string) {
		if a != b {
			diffs = append(diffs, name+" "+where(a, b))
		}
	}
	text("purpose", recorded.Purpose, live.Purpose)
	text("system", recorded.System, live.System)
	if recorded.Goal != live.Goal {
		// The goal is the caller's, word for word: say which one replays.
		diffs = append(diffs, fmt.Sprintf("goal %s (this cassette replays only --goal %q)", where(recorded.Goal, live.Goal), recorded.Goal))
	}
	if len(recorded.Context) != len(live.Context) {
		diffs = append(diffs, fmt.Sprintf("context has %d entries, recorded %d", len(live.Context), len(recorded.Context)))
	} else {
		for i := range recorded.Context {
			text(fmt.Sprintf("context[%d]", i), recorded.Context[i], live.Context[i])
		}
	}
	text("observation", recorded.Observation, live.Observation)
	if recorded.Contract != live.Contract {
		diffs = append(diffs, "contract differs")
	}
	text("corrective", recorded.Corrective, live.Corrective)
	if len(diffs) == 0 {
		return "the request digest differs"
	}
	return strings.Join(diffs, "; ")
}

// where says where a and b first differ, quoting a little of each.
func where(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && (i < len(a) && !utf8.RuneStart(a[i]) || i < len(b) && !utf8.RuneStart(b[i])) {
		i--
	}
	return fmt.Sprintf("differs at byte %d: recorded %s, got %s", i, around(a, i), around(b, i))
}

// around quotes s from a little before i to a little after.
func around(s string, i int) string {
	start, end := max(i-excerpt/2, 0), min(i+excerpt/2, len(s))
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	q := fmt.Sprintf("%q", s[start:end])
	if start > 0 {
		q = "…" + q
	}
	if end < len(s) {
		q += "…"
	}
	return q
}
