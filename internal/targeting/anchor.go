package targeting

import (
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// The structural_anchor rung.
//
// Label nodes: a visible node whose role is one of labelRole's and whose
// visible text (its name, else for text its value, else the joined text of
// its descendant text nodes) Fold-equals the anchor text. When a label node
// contains another label node (a cell and its text), only the innermost
// counts as "the anchor" for row_of and adjacent_to.
//
//   - row_of: for each innermost label node, its innermost enclosing row;
//     candidates are the nodes of that row, except the row's child that
//     holds the label (the label cell) and everything under it, and blank
//     cells.
//   - labelled_by: the row_of candidates, plus every node that immediately
//     follows a label, text or term label node among its parent's children,
//     plus every node that is not itself of a label role and whose own
//     accessible name Fold-equals the anchor text.
//   - adjacent_to: for each innermost label node, the nearest node after it
//     in document order within its parent, else the nearest before it
//     within its parent (ancestors excluded), else the same within its
//     grandparent.
//   - within_section: nodes whose Region Fold-equals the anchor text.
//
// Prose: a label node inside (or being) a heading, or one that visible
// text precedes in its block (the nearest ancestor of a non-inline role:
// "Enter the <b>Member ID</b> below"), is prose. Label nodes that are not
// prose are tried first; prose label nodes only when those yield no
// candidate. So an anchor text repeated in a heading or in instructions
// does not make the target ambiguous; two real labels still do.
//
// Inline labels (adjacent_to and labelled_by only, when no label node
// yields a candidate): a visible node of a label role, not in a heading,
// whose own text Fold-starts with the anchor text followed by more words
// ("Name: Jane Roe" for anchor "Name:"). The candidate is that node, or its
// parent when it is the parent's only child; the Resolution's Label is set
// and ExtractText drops the label from what it reads.
//
// Every candidate must also pass base (role, visible, scope) and nameOK
// (when the descriptor has a name): an anchor narrows a name, it never
// replaces one. Several candidates on the deciding tier are
// TARGET_AMBIGUOUS unless the descriptor has an ordinal.

// labelRole reports whether nodes of the role can carry anchor text.
func labelRole(role string) bool {
	switch role {
	case "text", "label", "cell", "columnheader", "rowheader", "heading",
		"paragraph", "legend", "caption", "term", "definition":
		return true
	}
	return false
}

func (r *resolver) anchor() bool {
	r.cands = r.cands[:0]
	r.inlineHit = false
	rel := r.d.Anchor.Relation
	if rel == domain.RelWithinSection {
		for _, c := range r.basec {
			if i := int(c); r.anchRC.is(r.nodes[i].Region, r.anchorText) && r.nameOK(i) {
				r.cands = append(r.cands, c)
			}
		}
		return len(r.cands) > 0
	}
	r.findLabels()
	if len(r.matches) > 0 {
		r.innermost()
		r.classify()
		for _, prose := range [2]bool{false, true} {
			r.cands = r.cands[:0]
			if rel == domain.RelLabelledBy && !prose {
				for _, c := range r.basec {
					if i := int(c); !labelRole(r.nodes[i].Role) && perception.FoldEqual(r.nodes[i].Name, r.anchorText) && r.nameOK(i) {
						r.cands = append(r.cands, c)
					}
				}
			}
			for k, m := range r.matches {
				if r.prose[k] != prose {
					continue
				}
				if rel == domain.RelLabelledBy {
					r.siblingOf(int(m))
				}
				if !r.inner[k] {
					continue
				}
				switch rel {
				case domain.RelRowOf, domain.RelLabelledBy:
					r.rowOf(int(m))
				case domain.RelAdjacentTo:
					r.adjacentTo(int(m))
				}
			}
			r.sortCands()
			if len(r.cands) > 0 {
				return true
			}
		}
	}
	if rel == domain.RelAdjacentTo || rel == domain.RelLabelledBy {
		r.cands = r.cands[:0]
		r.inlineLabels()
		r.sortCands()
		r.inlineHit = len(r.cands) > 0
	}
	return len(r.cands) > 0
}

// inlineRole reports roles that format text inside a block (they do not
// end a sentence): a label inside one belongs to the enclosing block's
// text.
func inlineRole(role string) bool {
	switch role {
	case "text", "strong", "emphasis", "mark", "code", "subscript", "superscript",
		"insertion", "deletion", "time", "abbr":
		return true
	}
	return false
}

// classify sets r.prose[k] for label nodes that are prose rather than a
// label: inside (or being) a heading, or a fragment of a sentence (visible
// text precedes it in its enclosing block, the nearest ancestor that is
// not an inline role, as in "Enter the <b>Member ID</b> below"). Prose matches are used only when no
// other label node yields a candidate.
func (r *resolver) classify() {
	if cap(r.prose) < len(r.matches) {
		r.prose = make([]bool, len(r.matches))
	}
	r.prose = r.prose[:len(r.matches)]
	for k, m := range r.matches {
		r.prose[k] = r.isProse(int(m))
	}
}

func (r *resolver) isProse(m int) bool {
	block := -1
	for p, steps := m, 0; p >= 0 && steps < len(r.nodes); p, steps = r.parent(p), steps+1 {
		role := r.nodes[p].Role
		if role == "heading" {
			return true
		}
		if block < 0 && !inlineRole(role) {
			block = p
		}
	}
	if block < 0 || block == m {
		return false
	}
	// Prose when visible text precedes m inside its block (document order
	// is index order).
	first := -1
	r.walk(block, -1, func(i int) bool {
		if n := &r.nodes[i]; n.Role == "text" && !n.States.Hidden && (n.Name != "" || n.Value != "") {
			first = i
			return false
		}
		return true
	})
	return first >= 0 && first < m
}

// foldedHasWordPrefix reports whether folded text t starts with folded
// prefix p followed by its end or a space.
func foldedHasWordPrefix(t []byte, p string) bool {
	return len(t) >= len(p) && string(t[:len(p)]) == p && (len(t) == len(p) || t[len(p)] == ' ')
}

// inlineLabels adds, for each visible label node whose own text starts
// with the anchor text and goes on ("Name: Jane Roe" for anchor "Name:"),
// the node itself, or its parent when the node is its parent's only child
// (a paragraph holding just that text), whichever passes base and nameOK.
// Label nodes in headings do not count. ExtractText then drops the label
// (Resolution.Label).
func (r *resolver) inlineLabels() {
	for _, c := range r.labelc {
		i := int(c)
		n := &r.nodes[i]
		own := n.Name
		if own == "" && n.Role == "text" {
			own = n.Value
		}
		if own == "" {
			continue
		}
		r.buf = perception.AppendFold(r.buf[:0], own)
		if len(r.buf) <= len(r.anchorText) || !foldedHasWordPrefix(r.buf, r.anchorText) || r.inHeading(i) {
			continue
		}
		switch p := r.parent(i); {
		case r.base(i) && r.nameOK(i):
			r.cands = append(r.cands, c)
		case p >= 0 && len(r.nodes[p].Children) == 1 && r.base(p) && r.nameOK(p):
			r.cands = append(r.cands, int32(p))
		}
	}
}

func (r *resolver) inHeading(i int) bool {
	for p, steps := i, 0; p >= 0 && steps < len(r.nodes); p, steps = r.parent(p), steps+1 {
		if r.nodes[p].Role == "heading" {
			return true
		}
	}
	return false
}

// parent returns node i's parent, or -1.
func (r *resolver) parent(i int) int {
	p := r.nodes[i].Parent
	if p < 0 || p >= len(r.nodes) || p == i {
		return -1
	}
	return p
}

// findLabels fills r.matches with the label nodes, in document order.
func (r *resolver) findLabels() {
	r.matches = r.matches[:0]
	for _, c := range r.labelc {
		i := int(c)
		n := &r.nodes[i]
		var ok bool
		switch {
		case n.Name != "":
			ok = perception.FoldEqual(n.Name, r.anchorText)
		case n.Role == "text":
			ok = perception.FoldEqual(n.Value, r.anchorText)
		case len(n.Children) > 0:
			ok, r.buf = perception.TextFoldEqual(r.buf, r.s, i, r.anchorText)
		}
		if ok {
			r.matches = append(r.matches, int32(i))
		}
	}
}

// innermost sets r.inner[k] for each label node with no label node below
// it.
func (r *resolver) innermost() {
	if cap(r.inner) < len(r.matches) {
		r.inner = make([]bool, len(r.matches))
	}
	r.inner = r.inner[:len(r.matches)]
	for k := range r.inner {
		r.inner[k] = true
	}
	for _, m := range r.matches {
		for p, steps := r.parent(int(m)), 0; p >= 0 && steps < len(r.nodes); p, steps = r.parent(p), steps+1 {
			if k, found := searchInt32(r.matches, int32(p)); found {
				r.inner[k] = false
			}
		}
	}
}

func searchInt32(s []int32, v int32) (int, bool) {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s) && s[lo] == v
}

// siblingOf adds, when label node mi is a label, text or term node, the
// node right after it among its parent's children.
func (r *resolver) siblingOf(mi int) {
	if role := r.nodes[mi].Role; role != "label" && role != "text" && role != "term" {
		return
	}
	p := r.parent(mi)
	if p < 0 {
		return
	}
	kids := r.nodes[p].Children
	for k, c := range kids {
		if c != mi || k+1 >= len(kids) {
			continue
		}
		if next := kids[k+1]; next >= 0 && next < len(r.nodes) && r.base(next) && r.nameOK(next) {
			r.cands = append(r.cands, int32(next))
		}
		break
	}
}

// rowOf adds the candidates in the innermost row around label node m.
func (r *resolver) rowOf(m int) {
	row, cell := -1, m
	for p, steps := r.parent(m), 0; p >= 0 && steps < len(r.nodes); p, steps = r.parent(p), steps+1 {
		if r.nodes[p].Role == "row" {
			row = p
			break
		}
		cell = p
	}
	if row < 0 {
		return
	}
	r.walk(row, cell, func(i int) bool {
		if i != cell && r.base(i) && r.nameOK(i) && !blankCell(&r.nodes[i]) {
			r.cands = append(r.cands, int32(i))
		}
		return true
	})
}

// blankCell reports an empty table cell (a layout spacer): it holds nothing
// to read, so it is never the value a row's label points at.
func blankCell(n *domain.Node) bool {
	return (n.Role == "cell" || n.Role == "gridcell") && n.Name == "" && n.Value == "" && len(n.Children) == 0
}

// adjacentTo adds the node nearest to label node m within its parent, else
// within its grandparent.
func (r *resolver) adjacentTo(m int) {
	p := r.parent(m)
	if p < 0 {
		return
	}
	if r.nearest(p, m) {
		return
	}
	if g := r.parent(p); g >= 0 {
		r.nearest(g, m)
	}
}

// nearest adds the first qualifying node after m (and m's subtree) in the
// subtree of container, else the last qualifying one before m that is not
// an ancestor of m. It reports whether it added one.
func (r *resolver) nearest(container, m int) bool {
	r.anc = r.anc[:0]
	for p, steps := r.parent(m), 0; p >= 0 && p != container && steps < len(r.nodes); p, steps = r.parent(p), steps+1 {
		r.anc = append(r.anc, int32(p))
	}
	before, after, seen := -1, -1, false
	r.walk(container, m, func(i int) bool {
		if i == m {
			seen = true
			return true
		}
		if !r.base(i) || !r.nameOK(i) {
			return true
		}
		if seen {
			after = i
			return false
		}
		for _, a := range r.anc {
			if int(a) == i {
				return true
			}
		}
		before = i
		return true
	})
	switch {
	case !seen:
		return false
	case after >= 0:
		r.cands = append(r.cands, int32(after))
	case before >= 0:
		r.cands = append(r.cands, int32(before))
	default:
		return false
	}
	return true
}

// walk visits the descendants of root (not root itself) in pre-order. When
// it reaches skip it calls visit(skip) but does not descend into it. It
// stops when visit returns false, and after len(nodes) visits (a cyclic
// snapshot cannot loop).
func (r *resolver) walk(root, skip int, visit func(i int) bool) {
	r.stack = r.stack[:0]
	push := func(i int) {
		kids := r.nodes[i].Children
		for k := len(kids) - 1; k >= 0; k-- {
			if c := kids[k]; c >= 0 && c < len(r.nodes) && c != i {
				r.stack = append(r.stack, int32(c))
			}
		}
	}
	push(root)
	for budget := len(r.nodes); len(r.stack) > 0 && budget > 0; budget-- {
		i := int(r.stack[len(r.stack)-1])
		r.stack = r.stack[:len(r.stack)-1]
		if !visit(i) {
			return
		}
		if i != skip {
			push(i)
		}
	}
}
