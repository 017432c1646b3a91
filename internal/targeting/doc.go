// Package targeting resolves semantic target descriptors against a
// normalised snapshot (see internal/perception), evaluates predicates over
// a snapshot, and synthesises the strongest unique descriptor for a node.
//
// # The ladder
//
// [Resolve] tries the rungs of the resolution ladder strongest first. The
// first rung that yields any candidate decides: one candidate wins; more
// than one is TARGET_AMBIGUOUS unless the descriptor carries an ordinal
// (1-based, document order); none on any rung is TARGET_NOT_FOUND. There is
// no scoring and no threshold.
//
//  1. semantic_exact: role and name (per the name's match mode), in scope.
//  2. semantic_normalized: role and Fold-equal name, in scope (not for
//     regex names).
//  3. structural_anchor: position relative to visible label text (row_of,
//     labelled_by, adjacent_to, within_section). When the descriptor has a
//     name, anchor candidates must also match it: an anchor narrows, it never
//     replaces a name, so a renamed control is not found through its anchor.
//  4. hint_cached: nodes whose cached CSS equals the hint, accepted only if
//     they also satisfy role, name, scope and anchor.
//  5. ordinal_in_region: role in scope, for descriptors with neither name nor
//     anchor (with an ordinal, the Nth; without one, the only such node).
//
// A descriptor's anchor always applies (invariant 23): with an anchor, a
// candidate on every rung (semantic_exact, semantic_normalized, hint_cached)
// must also be one of the structural_anchor candidates, so a rung whose
// name (or hint) matches satisfy no anchor yields nothing and the ladder
// goes on; when no rung is left it is TARGET_NOT_FOUND, and the message
// says how many nodes matched the role and name and which anchor none
// satisfied. So "the Edit button in the Savings row" is {button "Edit",
// row_of "Savings"}, an ordinal counts among the anchored candidates, and
// the lone "Look up" next to another member's label is not found. With a
// name, the structural_anchor rung can only find what the semantic rungs
// already found, so the anchor never finds a renamed control.
//
// Common to every rung: hidden nodes are never candidates; disabled nodes
// are (dispatch refuses them); a descriptor role is canonicalised with
// perception.CanonicalRole, an empty role matches any role, and role
// "textbox" also matches "searchbox" nodes (a searchbox is a textbox).
// Scope.Frame matches a node whose Frame equals it or whose last frame-path
// element equals it, or a node of a frame whose title Fold-equals it (the
// owner iframe's title, Frame.Title, or the framed document's own title);
// Scope.Region matches a node whose Region Fold-equals it. Anchor
// relations are defined precisely in anchor.go.
//
// Everything here is a pure function of its arguments and safe for
// concurrent use. Resolution of one descriptor does not copy the snapshot
// and allocates nothing per node.
package targeting
