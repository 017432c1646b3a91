package replay

import (
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// affixName reports whether name satisfies a starts_with/ends_with name
// descriptor: as written under match exact, folded under normalized (as
// targeting compares them).
func affixName(n *domain.NameMatch, name string) bool {
	if n.Match == domain.MatchNormalized {
		f := perception.Fold(name)
		return strings.HasPrefix(f, perception.Fold(n.StartsWith)) && strings.HasSuffix(f, perception.Fold(n.EndsWith))
	}
	return domain.HasAffixes(name, n.StartsWith, n.EndsWith)
}

// narrowsByName reports whether an extract step's regex target name
// narrows the text it read to the pattern's match. A step whose transform
// picks the value out of the text itself ({regex} or {strip_prefix}) is
// given the whole text: a name such as "^Name:" finds the node, and the
// transform {regex: "Name: (.+)"} reads it, as docs/reference/capability.md shows.
func narrowsByName(st *domain.Step) bool {
	if st.Target == nil || st.Target.Name == nil || st.Target.Name.Match != domain.MatchRegex || st.Target.Name.Affix() {
		return false
	}
	switch st.Transform.Kind() {
	case "regex", "strip_prefix":
		return false
	}
	return true
}
