package targeting

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
)

// Resolution is a resolved target.
type Resolution struct {
	// Node is the index of the resolved node in the snapshot, -1 when
	// resolution failed.
	Node int
	// Strategy is the rung that decided (also set on a failure that a rung
	// decided: ambiguity, ordinal out of range).
	Strategy domain.Strategy
	// Candidates is the number of candidates on the deciding rung.
	Candidates int
	// Drifted is true when the deciding rung is weaker than the descriptor's
	// RecordedStrategy.
	Drifted bool
	// Label is the anchor text when the node was found as an inline label
	// (its own text is the label followed by the value, "Name: Jane Roe");
	// ExtractText drops it. "" otherwise.
	Label string
}

// unboundMark starts an input placeholder that capability.BindTemplates
// replaces before targeting sees a descriptor; one left over fails closed.
const unboundMark = "{input."

// Resolve finds the node d identifies in s, which must be normalised
// (perception.Normalize): names cleaned, nodes in document order.
//
// It returns a *domain.Error with code TARGET_NOT_FOUND when no rung yields
// a candidate or the ordinal is out of range, TARGET_AMBIGUOUS when the
// deciding rung yields several candidates and d has no ordinal (the message
// lists their paths), and CAPABILITY_INVALID when d itself is malformed (an
// unknown match mode or anchor relation, an empty name or anchor text, a bad
// regular expression, an ordinal below 1, an unbound input template). The messages name the descriptor
// ([Describe]) and the rungs. Resolve is safe for concurrent use.
func Resolve(s *domain.UiSnapshot, d domain.TargetDescriptor) (Resolution, error) {
	r := getResolver()
	defer putResolver(r)
	r.desc = d
	if err := r.init(s, &r.desc); err != nil {
		return Resolution{Node: -1}, err
	}
	st := r.run()
	return r.result(st)
}

// candidates returns the deciding rung and its candidates (document order),
// ignoring d's ordinal.
func candidates(s *domain.UiSnapshot, d domain.TargetDescriptor) (domain.Strategy, []int, error) {
	r := getResolver()
	defer putResolver(r)
	r.desc = d
	r.desc.Ordinal = nil
	if err := r.init(s, &r.desc); err != nil {
		return "", nil, err
	}
	st := r.run()
	out := make([]int, len(r.cands))
	for i, c := range r.cands {
		out[i] = int(c)
	}
	return st, out, nil
}

// resolver holds the state of one resolution. Resolvers are pooled so that a
// call allocates nothing per node.
type resolver struct {
	s     *domain.UiSnapshot
	nodes []domain.Node
	d     *domain.TargetDescriptor
	desc  domain.TargetDescriptor // the caller's descriptor, copied so it does not escape

	role        string
	hasName     bool
	mode        domain.MatchMode
	name        string // cleaned d.Name.Value
	fname       string // folded
	fnameB      []byte // fname, for bytes.Contains
	re          *regexp.Regexp
	aff         affixState // a starts_with/ends_with name
	scopeFrame  string
	frameAlt    []string // frame paths scopeFrame names by title
	scopeRegion string   // folded; "" when unscoped
	anchorText  string   // folded
	css         string
	ordinal     int

	cands   []int32
	basec   []int32 // nodes passing base, in document order
	labelc  []int32 // visible nodes of a label role, in document order
	saved   []int32
	matches []int32
	inner   []bool
	prose   []bool
	// inlineHit is set when the anchor's candidates are inline labels.
	inlineHit bool
	// anchored is set when the descriptor has an anchor; anch then holds
	// its candidates (document order), which every rung's candidates must
	// be among.
	anchored bool
	anch     []int32
	// unanchored is the most candidates a rung had before the anchor
	// removed them all (for the not-found message).
	unanchored int
	stack      []int32
	anc        []int32
	buf        []byte
	tried      [5]domain.Strategy
	ntried     int
	scopeRC    regionCache
	anchRC     regionCache

	// Lazily folded names (contains matching): gen[i] == cur marks node i's
	// folded name as arena[off[2i]:off[2i+1]].
	gen   []uint32
	off   []uint32
	arena []byte
	cur   uint32
}

// regionCache remembers the last region compared: consecutive nodes mostly
// share one region string.
type regionCache struct {
	src string
	ok  bool
	set bool
}

func (c *regionCache) is(region, folded string) bool {
	if c.set && region == c.src {
		return c.ok
	}
	c.src, c.ok, c.set = region, perception.FoldEqual(region, folded), true
	return c.ok
}

var resolverPool = sync.Pool{New: func() any { return new(resolver) }}

func getResolver() *resolver { return resolverPool.Get().(*resolver) }

func putResolver(r *resolver) {
	r.s, r.nodes, r.d, r.re = nil, nil, nil, nil
	r.anchored, r.unanchored = false, 0
	r.desc = domain.TargetDescriptor{}
	r.scopeRC, r.anchRC = regionCache{}, regionCache{}
	if cap(r.arena) > 1<<20 {
		r.arena = nil
	}
	resolverPool.Put(r)
}

func invalid(d *domain.TargetDescriptor, format string, args ...any) error {
	return domain.Errorf(domain.CodeCapabilityInvalid, "invalid target %s: %s", Describe(*d), fmt.Sprintf(format, args...))
}

// init validates d and prepares the per-call state.
func (r *resolver) init(s *domain.UiSnapshot, d *domain.TargetDescriptor) error {
	r.s, r.d = s, d
	r.nodes = nil
	if s != nil {
		r.nodes = s.Nodes
	}
	r.cands, r.matches = r.cands[:0], r.matches[:0]
	r.ntried = 0
	r.role = perception.CanonicalRole(d.Role)
	r.hasName, r.name, r.fname, r.re, r.mode = false, "", "", nil, ""
	r.aff.on = false
	if d.Name != nil && d.Name.Input != "" {
		return invalid(d, "its name takes input %s, unbound: bind the capability's templates first (capability.BindTemplates)", d.Name.Input)
	}
	if d.Name != nil && strings.Contains(d.Name.Value, unboundMark) || d.Anchor != nil && strings.Contains(d.Anchor.Text, unboundMark) {
		return invalid(d, "an {input.NAME} placeholder is unbound: bind the capability's templates first (capability.BindTemplates)")
	}
	if d.Name != nil {
		r.hasName = true
		r.mode = d.Name.Match
		if r.mode == "" {
			r.mode = domain.MatchExact
		}
		if d.Name.Affix() {
			if err := r.initAffix(d); err != nil {
				return err
			}
		}
		switch {
		case r.aff.on:
		case r.mode == domain.MatchExact, r.mode == domain.MatchNormalized, r.mode == domain.MatchContains:
			r.name = perception.CleanName(d.Name.Value)
			if r.name == "" {
				return invalid(d, "empty name")
			}
			r.fname = perception.Fold(r.name)
		case r.mode == domain.MatchRegex:
			if d.Name.Value == "" {
				return invalid(d, "empty name pattern")
			}
			re, err := compile(d.Name.Value)
			if err != nil {
				return invalid(d, "name pattern: %v", err)
			}
			r.re = re
		default:
			return invalid(d, "unknown match mode %q", d.Name.Match)
		}
		if r.mode == domain.MatchContains && r.fname != "" {
			r.fnameB = append(r.fnameB[:0], r.fname...)
			r.foldCache()
		}
	}
	r.scopeFrame, r.scopeRegion = "", ""
	r.frameAlt = r.frameAlt[:0]
	if d.Scope != nil {
		r.scopeFrame = d.Scope.Frame
		if r.scopeFrame != "" {
			r.frameAlt = frameAliases(r.frameAlt, s, r.scopeFrame)
		}
		if d.Scope.Region != "" {
			r.scopeRegion = perception.Fold(d.Scope.Region)
			if r.scopeRegion == "" {
				return invalid(d, "scope region %q has no letters or digits", d.Scope.Region)
			}
		}
	}
	r.anchorText = ""
	if a := d.Anchor; a != nil {
		switch a.Relation {
		case domain.RelRowOf, domain.RelAdjacentTo, domain.RelWithinSection, domain.RelLabelledBy:
		default:
			return invalid(d, "unknown anchor relation %q", a.Relation)
		}
		r.anchorText = perception.Fold(a.Text)
		if r.anchorText == "" {
			return invalid(d, "anchor text %q has no letters or digits", a.Text)
		}
	}
	r.ordinal = 0
	if d.Ordinal != nil {
		if *d.Ordinal < 1 {
			return invalid(d, "ordinal %d (ordinals start at 1)", *d.Ordinal)
		}
		r.ordinal = *d.Ordinal
	}
	r.css = ""
	if d.Hints != nil {
		r.css = d.Hints.CSS
	}
	return nil
}

// foldCache readies the lazily folded names for this call.
func (r *resolver) foldCache() {
	n := len(r.nodes)
	if len(r.gen) < n {
		r.gen = make([]uint32, n)
		r.off = make([]uint32, 2*n)
		r.cur = 0
	}
	r.cur++
	if r.cur == 0 {
		clear(r.gen)
		r.cur = 1
	}
	r.arena = r.arena[:0]
}

// folded returns node i's folded name, folding it at most once per call.
func (r *resolver) folded(i int) []byte {
	if r.gen[i] == r.cur {
		return r.arena[r.off[2*i]:r.off[2*i+1]]
	}
	start := len(r.arena)
	r.arena = perception.AppendFold(r.arena, r.nodes[i].Name)
	r.gen[i], r.off[2*i], r.off[2*i+1] = r.cur, uint32(start), uint32(len(r.arena))
	return r.arena[start:]
}

// base reports whether node i is visible, has the role and is in scope.
func (r *resolver) base(i int) bool {
	n := &r.nodes[i]
	if r.role != "" && n.Role != r.role && (r.role != "textbox" || n.Role != "searchbox") {
		return false
	}
	if n.States.Hidden {
		return false
	}
	if r.scopeFrame != "" && !inFrame(n.Frame, r.scopeFrame, r.frameAlt) {
		return false
	}
	if r.scopeRegion != "" && !r.scopeRC.is(n.Region, r.scopeRegion) {
		return false
	}
	return true
}

// exactName is the semantic_exact name test.
func (r *resolver) exactName(i int) bool {
	if r.aff.on {
		return r.affixExact(i)
	}
	name := r.nodes[i].Name
	switch r.mode {
	case domain.MatchExact:
		return name == r.name
	case domain.MatchRegex:
		return r.re.MatchString(name)
	}
	if r.fname == "" {
		return name == r.name
	}
	if r.mode == domain.MatchContains {
		return bytes.Contains(r.folded(i), r.fnameB)
	}
	return perception.FoldEqual(name, r.fname)
}

// nameOK is the Fold-match every weaker rung requires of a named
// descriptor: Fold-equal (exact, normalized), Fold-substring (contains), the
// pattern (regex).
func (r *resolver) nameOK(i int) bool {
	if !r.hasName {
		return true
	}
	if r.aff.on {
		return r.affixFolded(i)
	}
	name := r.nodes[i].Name
	switch {
	case r.mode == domain.MatchRegex:
		return r.re.MatchString(name)
	case r.fname == "":
		return name == r.name
	case r.mode == domain.MatchContains:
		return bytes.Contains(r.folded(i), r.fnameB)
	}
	return perception.FoldEqual(name, r.fname)
}

type rung int

const (
	rungExact rung = iota
	rungNormalized
	rungHint
	rungOrdinal
)

// run climbs down the ladder and returns the deciding rung ("" when none
// yields a candidate); the candidates are in r.cands.
//
// A descriptor's anchor applies on every rung: with an anchor, a rung's
// candidates are only the nodes that also satisfy it (the structural_anchor
// candidates, computed once), so a lone name match beside another label is
// no candidate at all, and neither is a cached hint's node.
func (r *resolver) run() domain.Strategy {
	r.scan()
	r.unanchored, r.anchored = 0, false
	if r.d.Anchor != nil {
		r.anchor()
		r.anch = append(r.anch[:0], r.cands...)
		r.anchored = true
	}
	if r.hasName {
		if r.collect(rungExact, domain.StrategySemanticExact) && r.narrow() {
			return domain.StrategySemanticExact
		}
		if (r.aff.on && r.mode == domain.MatchExact || r.mode != domain.MatchRegex && r.fname != "") && r.collect(rungNormalized, domain.StrategySemanticNormalized) && r.narrow() {
			return domain.StrategySemanticNormalized
		}
	}
	if r.anchored {
		r.mark(domain.StrategyStructuralAnchor)
		r.cands = append(r.cands[:0], r.anch...)
		if len(r.cands) > 0 {
			return domain.StrategyStructuralAnchor
		}
	}
	if r.css != "" && r.collect(rungHint, domain.StrategyHintCached) && r.narrow() {
		return domain.StrategyHintCached
	}
	if !r.hasName && r.d.Anchor == nil && r.collect(rungOrdinal, domain.StrategyOrdinalInRegion) {
		return domain.StrategyOrdinalInRegion
	}
	r.cands = r.cands[:0]
	return ""
}

// narrow keeps, of a rung's candidates, those that also satisfy the
// descriptor's anchor (the structural_anchor candidates), and reports
// whether any is left. Without an anchor it keeps them all. The most name
// (or hint) matches an anchor left out is kept for the not-found message.
func (r *resolver) narrow() bool {
	if !r.anchored {
		return len(r.cands) > 0
	}
	kept := r.cands[:0]
	n := len(r.cands)
	for _, c := range r.cands {
		if _, ok := searchInt32(r.anch, c); ok {
			kept = append(kept, c)
		}
	}
	r.cands = kept
	if len(r.cands) == 0 && n > r.unanchored {
		r.unanchored = n
	}
	return len(r.cands) > 0
}

func (r *resolver) mark(st domain.Strategy) {
	if r.ntried < len(r.tried) {
		r.tried[r.ntried] = st
		r.ntried++
	}
}

// scan makes the one pass over all nodes that a resolution needs: it
// collects the nodes that pass base (every rung filters these) and, when the
// descriptor has a text anchor, the visible nodes that can carry anchor
// text. Node structs are large, so touching each once matters more than
// anything done per candidate.
func (r *resolver) scan() {
	r.basec, r.labelc = r.basec[:0], r.labelc[:0]
	labels := r.d.Anchor != nil && r.d.Anchor.Relation != domain.RelWithinSection
	for i := range r.nodes {
		if labels && labelRole(r.nodes[i].Role) && !r.nodes[i].States.Hidden {
			r.labelc = append(r.labelc, int32(i))
		}
		if r.base(i) {
			r.basec = append(r.basec, int32(i))
		}
	}
}

// collect filters the base nodes for one rung.
func (r *resolver) collect(k rung, st domain.Strategy) bool {
	r.mark(st)
	r.cands = r.cands[:0]
	for _, c := range r.basec {
		i := int(c)
		var ok bool
		switch k {
		case rungExact:
			ok = r.exactName(i)
		case rungNormalized:
			ok = r.aff.on && r.affixFolded(i) || !r.aff.on && perception.FoldEqual(r.nodes[i].Name, r.fname)
		case rungHint:
			ok = r.nodes[i].CSS == r.css && r.nameOK(i)
		case rungOrdinal:
			ok = true
		}
		if ok {
			r.cands = append(r.cands, int32(i))
		}
	}
	return len(r.cands) > 0
}

// maxListed bounds the candidate paths an ambiguity message lists.
const maxListed = 8

func (r *resolver) result(st domain.Strategy) (Resolution, error) {
	d := r.d
	res := Resolution{Node: -1, Strategy: st, Candidates: len(r.cands)}
	if st == "" {
		res.Candidates = 0
		if r.unanchored > 0 {
			return res, domain.Errorf(domain.CodeTargetNotFound, "no node matches %s: %d node(s) match the role and name, none %s %q (tried %s)",
				Describe(*d), r.unanchored, d.Anchor.Relation, d.Anchor.Text, r.triedList())
		}
		return res, domain.Errorf(domain.CodeTargetNotFound, "no node matches %s (tried %s)", Describe(*d), r.triedList())
	}
	res.Drifted = d.RecordedStrategy != "" && st.Strength() > d.RecordedStrategy.Strength()
	if r.anchored && r.inlineHit {
		res.Label = d.Anchor.Text
	}
	switch {
	case r.ordinal > 0:
		if r.ordinal > len(r.cands) {
			return res, domain.Errorf(domain.CodeTargetNotFound, "no node matches %s: ordinal %d out of range, %d candidate(s) on %s",
				Describe(*d), r.ordinal, len(r.cands), st)
		}
		res.Node = int(r.cands[r.ordinal-1])
	case len(r.cands) > 1:
		var b strings.Builder
		for k, c := range r.cands {
			if k == maxListed {
				fmt.Fprintf(&b, " and %d more", len(r.cands)-maxListed)
				break
			}
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r.nodes[c].Path)
		}
		return res, domain.Errorf(domain.CodeTargetAmbiguous, "%s is ambiguous on %s: %d candidates: %s",
			Describe(*d), st, len(r.cands), b.String())
	default:
		res.Node = int(r.cands[0])
	}
	return res, nil
}

func (r *resolver) triedList() string {
	if r.ntried == 0 {
		return "no rung applies"
	}
	parts := make([]string, r.ntried)
	for i := range parts {
		parts[i] = string(r.tried[i])
	}
	return strings.Join(parts, ", ")
}

// sortCands orders the candidates by document order and drops duplicates.
func (r *resolver) sortCands() {
	slices.Sort(r.cands)
	r.cands = slices.Compact(r.cands)
}

// Describe renders a descriptor for messages and logs, e.g.
// `button "Search" (contains) in frame "content" region "Member" row_of
// "Savings Balance" #2 css "#go"`. An empty role prints as "*".
func Describe(d domain.TargetDescriptor) string {
	var b strings.Builder
	if d.Role == "" {
		b.WriteString("*")
	} else {
		b.WriteString(d.Role)
	}
	if d.Name != nil {
		describeName(&b, d.Name)
		if d.Name.Match != "" && d.Name.Match != domain.MatchExact {
			fmt.Fprintf(&b, " (%s)", d.Name.Match)
		}
	}
	if d.Scope != nil {
		if d.Scope.Frame != "" {
			fmt.Fprintf(&b, " in frame %q", d.Scope.Frame)
		}
		if d.Scope.Region != "" {
			fmt.Fprintf(&b, " region %q", d.Scope.Region)
		}
	}
	if d.Anchor != nil {
		fmt.Fprintf(&b, " %s %q", d.Anchor.Relation, d.Anchor.Text)
	}
	if d.Ordinal != nil {
		fmt.Fprintf(&b, " #%d", *d.Ordinal)
	}
	if d.Hints != nil && d.Hints.CSS != "" {
		fmt.Fprintf(&b, " css %q", d.Hints.CSS)
	}
	return b.String()
}
