package perception

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/cuahq/cua/internal/domain"
)

// Node flags used while normalising.
const (
	flagListed  uint8 = 1 << iota // named in some node's Children
	flagRoot                      // starts a tree of its own
	flagVisited                   // emitted or dropped
)

// Normalize returns a new, normalised snapshot built from raw; raw is not
// modified. It returns nil for a nil raw.
//
// Trees. Each frame is its own tree: the root of every frame listed in
// raw.Frames has Parent -1 and Depth 0 in the result whether or not the
// adapter linked it under its Iframe node (the Iframe node keeps no child
// pointing into the frame), so a frame normalises identically either way.
// A node whose Frame is set and differs from its parent's also starts a tree
// (a frame the adapter did not list). Other parentless nodes (an adapter's
// synthesized JavaScript dialog, for example) are roots too. Children are
// taken from each node's Children list, plus any node whose Parent names a
// node that does not list it; a node reachable twice is kept at its first
// position, and nodes reachable from no root (a cycle) become roots last, so
// no content silently disappears.
//
// Order. Trees are emitted frame by frame in raw.Frames order, then other
// roots in raw index order; within a tree nodes are in pre-order (document
// order). A subtree therefore occupies a contiguous index range.
//
// Roles arrive canonical (each adapter maps its platform's roles, see
// domain/roles.go); [CanonicalRole] only folds ARIA synonyms and case. Names
// (and descriptions) are cleaned with [CleanName]; values are kept as they
// are.
//
// Dropped (the children of a dropped node are re-parented to its nearest kept
// ancestor; a tree's root is never dropped):
//   - hidden nodes (States.Hidden);
//   - generic and none (including "presentation") nodes with no name, no
//     value and not focusable;
//   - text nodes with no name and no value.
//
// Each kept node gets:
//   - Index, Parent (nearest kept ancestor), Children, Depth (0 at a tree's
//     root);
//   - Frame: the frame path of its tree;
//   - Path: frame path + "/" + the root's position among the roots of that
//     frame (almost always 0), then "." + the position among the kept
//     children at each level ("content/0.3.1");
//   - Region: the name of the nearest named landmark that encloses it or is
//     it (main, navigation, region, form, search, complementary, banner,
//     contentinfo, dialog, alertdialog; unnamed landmarks do not count),
//     else the name of the nearest named heading at or before it in
//     document order within its tree;
//   - Fingerprint: 16 hex digits of a hash of (role, folded name, depth,
//     parent role).
//
// The snapshot Fingerprint is 32 hex digits of a SHA-256 over the sequence
// of (role, folded name, depth) of all kept nodes; values, states, bounds and
// refs do not contribute. Frames are copied with Root remapped (-1 when the
// raw root index was invalid).
func Normalize(raw *domain.UiSnapshot) *domain.UiSnapshot {
	if raw == nil {
		return nil
	}
	out := &domain.UiSnapshot{
		Seq:        raw.Seq,
		URL:        raw.URL,
		Title:      raw.Title,
		HTTPStatus: raw.HTTPStatus,
		PostBacked: raw.PostBacked,
	}
	if raw.Dialog != nil {
		d := *raw.Dialog
		out.Dialog = &d
	}
	nz := newNormalizer(raw)
	nz.run()
	nz.finish(out)
	return out
}

type normalizer struct {
	raw    *domain.UiSnapshot
	roles  []string
	flags  []uint8
	newIdx []int32
	extra  map[int][]int // parent -> children that name it but it does not list

	roots      []int
	rootFrame  map[int]string // frame path of roots listed in raw.Frames
	rootCount  map[string]int
	stack      []item
	nodes      []domain.Node
	childCount []int32
	pathBuf    []byte
	pathEnd    []int32 // pathEnd[k] is the end of node k's path in pathBuf
	fpBuf      []byte
	sum        []byte // per-node (role, folded name, depth) hashes for the snapshot
	fold       []byte
}

type item struct {
	raw      int32
	parent   int32  // output index of the nearest kept ancestor, -1 at a root
	landmark string // name of the nearest enclosing named landmark
}

func newNormalizer(raw *domain.UiSnapshot) *normalizer {
	n := len(raw.Nodes)
	nz := &normalizer{
		raw:    raw,
		roles:  make([]string, n),
		flags:  make([]uint8, n),
		newIdx: make([]int32, n),
	}
	kept := 0
	for i := range raw.Nodes {
		rn := &raw.Nodes[i]
		nz.roles[i] = CanonicalRole(rn.Role)
		nz.newIdx[i] = -1
		for _, c := range rn.Children {
			if c >= 0 && c < n && c != i {
				nz.flags[c] |= flagListed
			}
		}
		if !droppable(nz.roles[i], blankOr(rn.Name), rn.Value, rn.States.Focusable, rn.States.Hidden) {
			kept++
		}
	}
	nz.nodes = make([]domain.Node, 0, kept+len(raw.Frames)+1)
	nz.childCount = make([]int32, 0, cap(nz.nodes))
	nz.pathEnd = make([]int32, 0, cap(nz.nodes))
	nz.pathBuf = make([]byte, 0, cap(nz.nodes)*12)
	nz.fpBuf = make([]byte, 0, cap(nz.nodes)*16)
	nz.sum = make([]byte, 0, cap(nz.nodes)*8)
	nz.rootFrame = make(map[int]string, len(raw.Frames))
	nz.rootCount = make(map[string]int, len(raw.Frames)+1)
	for i := range raw.Nodes {
		p := raw.Nodes[i].Parent
		if p >= 0 && p < n && p != i {
			if nz.flags[i]&flagListed == 0 {
				if nz.extra == nil {
					nz.extra = make(map[int][]int)
				}
				nz.extra[p] = append(nz.extra[p], i)
			}
		}
	}
	for _, f := range raw.Frames {
		r := f.Root
		if r < 0 || r >= n || nz.flags[r]&flagRoot != 0 {
			continue
		}
		nz.flags[r] |= flagRoot
		nz.rootFrame[r] = f.Path
		nz.roots = append(nz.roots, r)
	}
	for i := range raw.Nodes {
		p := raw.Nodes[i].Parent
		if (p < 0 || p >= n || p == i) && nz.flags[i]&(flagListed|flagRoot) == 0 {
			nz.flags[i] |= flagRoot
			nz.roots = append(nz.roots, i)
		}
	}
	return nz
}

// blankOr returns "" when name is blank, else name; only emptiness matters
// to droppable.
func blankOr(name string) string {
	if blank(name) {
		return ""
	}
	return name
}

func (nz *normalizer) run() {
	for q := 0; q < len(nz.roots); q++ {
		nz.tree(nz.roots[q])
	}
	// Whatever no root reaches (a cycle) becomes a root, in index order.
	for i := range nz.raw.Nodes {
		if nz.flags[i]&flagVisited == 0 {
			nz.flags[i] |= flagRoot
			nz.roots = append(nz.roots, i)
			for q := len(nz.roots) - 1; q < len(nz.roots); q++ {
				nz.tree(nz.roots[q])
			}
		}
	}
}

// tree emits the tree rooted at raw node r.
func (nz *normalizer) tree(r int) {
	if nz.flags[r]&flagVisited != 0 {
		return
	}
	raw := nz.raw
	frame, ok := nz.rootFrame[r]
	if !ok {
		frame = raw.Nodes[r].Frame
	}
	rootPos := nz.rootCount[frame]
	nz.rootCount[frame] = rootPos + 1
	lastHeading := ""
	nz.stack = append(nz.stack[:0], item{raw: int32(r), parent: -1})
	for len(nz.stack) > 0 {
		it := nz.stack[len(nz.stack)-1]
		nz.stack = nz.stack[:len(nz.stack)-1]
		ri := int(it.raw)
		if nz.flags[ri]&flagVisited != 0 {
			continue
		}
		nz.flags[ri] |= flagVisited
		rn := &raw.Nodes[ri]
		role := nz.roles[ri]
		parent := it.parent
		landmark := it.landmark
		name := CleanName(rn.Name)
		if ri == r || !droppable(role, name, rn.Value, rn.States.Focusable, rn.States.Hidden) {
			k := len(nz.nodes)
			nz.newIdx[ri] = int32(k)
			if IsLandmark(role) && name != "" {
				landmark = name
			}
			if role == "heading" && name != "" {
				lastHeading = name
			}
			region := landmark
			if region == "" {
				region = lastHeading
			}
			nz.emit(rn, role, name, frame, region, int(parent), rootPos)
			parent = int32(k)
		}
		extra := nz.extra[ri]
		for j := len(extra) - 1; j >= 0; j-- {
			nz.push(extra[j], ri, frame, parent, landmark)
		}
		for j := len(rn.Children) - 1; j >= 0; j-- {
			nz.push(rn.Children[j], ri, frame, parent, landmark)
		}
	}
}

func (nz *normalizer) push(c, from int, frame string, parent int32, landmark string) {
	if c < 0 || c >= len(nz.raw.Nodes) || c == from || nz.flags[c]&(flagVisited|flagRoot) != 0 {
		return
	}
	if f := nz.raw.Nodes[c].Frame; f != "" && f != frame {
		// A frame the adapter did not list in Frames: its own tree.
		nz.flags[c] |= flagRoot
		nz.roots = append(nz.roots, c)
		return
	}
	nz.stack = append(nz.stack, item{raw: int32(c), parent: parent, landmark: landmark})
}

// emit appends the output node for rn.
func (nz *normalizer) emit(rn *domain.Node, role, name, frame, region string, parent, rootPos int) {
	k := len(nz.nodes)
	depth := 0
	parentRole := ""
	if parent >= 0 {
		p := &nz.nodes[parent]
		depth = p.Depth + 1
		parentRole = p.Role
		pstart := int32(0)
		if parent > 0 {
			pstart = nz.pathEnd[parent-1]
		}
		nz.pathBuf = append(nz.pathBuf, nz.pathBuf[pstart:nz.pathEnd[parent]]...)
		nz.pathBuf = append(nz.pathBuf, '.')
		nz.pathBuf = strconv.AppendInt(nz.pathBuf, int64(nz.childCount[parent]), 10)
		nz.childCount[parent]++
	} else {
		nz.pathBuf = append(nz.pathBuf, frame...)
		nz.pathBuf = append(nz.pathBuf, '/')
		nz.pathBuf = strconv.AppendInt(nz.pathBuf, int64(rootPos), 10)
	}
	nz.pathEnd = append(nz.pathEnd, int32(len(nz.pathBuf)))
	nz.childCount = append(nz.childCount, 0)

	// Hashes: h1 over (role, folded name, depth) feeds the snapshot
	// fingerprint; the node fingerprint adds the parent role.
	nz.fold = AppendFold(nz.fold[:0], name)
	h := fnvOffset
	h = fnvString(h, role)
	h = fnvByte(h, 0)
	h = fnvBytes(h, nz.fold)
	h = fnvByte(h, 0)
	h = fnvUint(h, uint64(depth))
	nz.sum = binary.LittleEndian.AppendUint64(nz.sum, h)
	h = fnvByte(h, 0)
	h = fnvString(h, parentRole)
	var hb [8]byte
	binary.BigEndian.PutUint64(hb[:], h)
	nz.fpBuf = hex.AppendEncode(nz.fpBuf, hb[:])

	desc := rn.Description
	if desc != "" {
		desc = CleanName(desc)
	}
	nz.nodes = append(nz.nodes, domain.Node{
		Index:       k,
		Role:        role,
		Name:        name,
		Value:       rn.Value,
		Description: desc,
		States:      rn.States,
		Bounds:      rn.Bounds,
		Frame:       frame,
		Region:      region,
		Parent:      parent,
		Depth:       depth,
		CSS:         rn.CSS,
		Ref:         rn.Ref,
		Sensitive:   rn.Sensitive,
	})
}

// finish fills Children, Path and Fingerprint, and remaps frames.
func (nz *normalizer) finish(out *domain.UiSnapshot) {
	nodes := nz.nodes
	total := 0
	for _, c := range nz.childCount {
		total += int(c)
	}
	backing := make([]int, total)
	off := 0
	for k := range nodes {
		if c := int(nz.childCount[k]); c > 0 {
			nodes[k].Children = backing[off : off : off+c]
			off += c
		}
	}
	paths := string(nz.pathBuf)
	fps := string(nz.fpBuf)
	prev := int32(0)
	for k := range nodes {
		n := &nodes[k]
		if n.Parent >= 0 {
			p := &nodes[n.Parent]
			p.Children = append(p.Children, k)
		}
		n.Path = paths[prev:nz.pathEnd[k]]
		prev = nz.pathEnd[k]
		n.Fingerprint = fps[k*16 : k*16+16]
	}
	out.Nodes = nodes
	if len(nz.raw.Frames) > 0 {
		out.Frames = make([]domain.Frame, len(nz.raw.Frames))
		for i, f := range nz.raw.Frames {
			if f.Root >= 0 && f.Root < len(nz.newIdx) {
				f.Root = int(nz.newIdx[f.Root])
			} else {
				f.Root = -1
			}
			out.Frames[i] = f
		}
	}
	sum := sha256.Sum256(nz.sum)
	out.Fingerprint = hex.EncodeToString(sum[:16])
}

// FNV-1a, 64 bit.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

func fnvUint(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h = fnvByte(h, byte(v))
		v >>= 8
	}
	return h
}
