package capability

import "github.com/cuahq/cua/internal/domain"

// nameForm checks that a name object sets exactly one of value, $input and
// the starts_with/ends_with pair, and that a pair is matched exact or
// normalized (a prefix is text, not a pattern, and contains would make it
// no prefix at all).
func (v *semantic) nameForm(ptr string, n *domain.NameMatch) {
	forms := 0
	for _, set := range []bool{n.Value != "", n.Input != "", n.Affix()} {
		if set {
			forms++
		}
	}
	if forms != 1 {
		v.add(ptr, "set exactly one of value and $input (or starts_with/ends_with)")
		return
	}
	if n.Affix() && n.Match != domain.MatchExact && n.Match != domain.MatchNormalized && n.Match != "" {
		v.add(ptr+pointer("match"), "starts_with and ends_with are matched exact or normalized, not %s", n.Match)
	}
}
