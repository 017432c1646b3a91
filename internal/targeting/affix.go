package targeting

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// affixState is a resolver's starts_with/ends_with name: the texts as
// written (semantic_exact under match exact) and folded (match normalized,
// the semantic_normalized rung and every weaker rung).
type affixState struct {
	on       bool
	pre, suf string
	fpre     []byte
	fsuf     []byte
}

// initAffix readies a starts_with/ends_with name. Only exact and
// normalized compare a prefix and a suffix; a pair whose texts fold to
// nothing cannot be compared folded.
func (r *resolver) initAffix(d *domain.TargetDescriptor) error {
	n := d.Name
	r.aff.on, r.aff.pre, r.aff.suf = true, n.StartsWith, n.EndsWith
	if n.Value != "" || n.Input != "" {
		return invalid(d, "a name sets value or $input, or starts_with/ends_with, not both")
	}
	switch r.mode {
	case domain.MatchExact, domain.MatchNormalized:
	default:
		return invalid(d, "starts_with/ends_with are matched exact or normalized, not %s", r.mode)
	}
	if containsUnbound(n.StartsWith) || containsUnbound(n.EndsWith) {
		return invalid(d, "an {input.NAME} placeholder is unbound: bind the capability's templates first (capability.BindTemplates)")
	}
	r.aff.fpre = append(r.aff.fpre[:0], perception.Fold(n.StartsWith)...)
	r.aff.fsuf = append(r.aff.fsuf[:0], perception.Fold(n.EndsWith)...)
	if len(r.aff.fpre) == 0 && len(r.aff.fsuf) == 0 {
		return invalid(d, "starts_with %q and ends_with %q have no letters or digits", n.StartsWith, n.EndsWith)
	}
	r.foldCache()
	return nil
}

// affixExact is the semantic_exact test of a starts_with/ends_with name:
// the name as it is (match exact), or folded (match normalized).
func (r *resolver) affixExact(i int) bool {
	if r.mode == domain.MatchNormalized {
		return r.affixFolded(i)
	}
	return domain.HasAffixes(r.nodes[i].Name, r.aff.pre, r.aff.suf)
}

// affixFolded compares the folded name with the folded texts: case,
// punctuation and runs of white space aside, as the normalized rung does.
func (r *resolver) affixFolded(i int) bool {
	f := r.folded(i)
	return bytes.HasPrefix(f, r.aff.fpre) && bytes.HasSuffix(f, r.aff.fsuf)
}

// containsUnbound reports whether s still holds an {input.NAME}
// placeholder.
func containsUnbound(s string) bool { return strings.Contains(s, unboundMark) }

// describeName writes a name for a message: its value quoted, or its
// starts_with/ends_with pair.
func describeName(b *strings.Builder, n *domain.NameMatch) {
	if !n.Affix() {
		fmt.Fprintf(b, " %q", n.Value)
		return
	}
	if n.StartsWith != "" {
		fmt.Fprintf(b, " starting %q", n.StartsWith)
	}
	if n.EndsWith != "" {
		fmt.Fprintf(b, " ending %q", n.EndsWith)
	}
}
