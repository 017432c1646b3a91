package browser

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/domain"
)

// Refs of the synthesized dialog buttons.
const (
	refDialogAccept  = "dialog:accept"
	refDialogDismiss = "dialog:dismiss"
)

// docView indexes one document of a DOMSnapshot.
type docView struct {
	strs      []string
	d         *domsnapshot.DocumentSnapshot
	byBackend map[cdp.BackendNodeID]int
	layout    map[int]domain.Rect // node index → union of its layout boxes, document coordinates
	sig       uint64
}

// frameRec is one frame of a capture.
type frameRec struct {
	id        cdp.FrameID
	loader    cdp.LoaderID
	url       string
	treeName  string
	ts        *tsession
	doc       *docView
	kids      []*frameRec
	parentRec *frameRec

	name, path string
	title      string            // the owner <iframe>'s title attribute
	owner      cdp.BackendNodeID // the owner <iframe> in the parent document
	ownerIdx   int               // its node index in the parent's docView, or -1
	delta      [2]float64        // owner's content-box origin minus its border-box origin
	offX, offY float64           // document coordinates → page coordinates
	nodes      []*accessibility.Node
}

var sigSeed = maphash.MakeSeed()

// Observe returns a raw snapshot of every frame of the page (see the package
// doc). Seq increases with every call. While a JavaScript dialog is open it
// returns the last tree plus the dialog's synthesized nodes without asking
// the blocked renderer. It returns an error wrapping surface.ErrCrashed when
// the page or the browser is gone.
func (s *Session) Observe(ctx context.Context) (*domain.UiSnapshot, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	s.tr.mu.Lock()
	start := s.tr.changes
	open := s.tr.dialog != nil
	s.tr.mu.Unlock()
	var snap *domain.UiSnapshot
	if !open {
		var err error
		snap, err = s.capture(ctx)
		if err != nil && !errors.Is(err, errDialogOpen) {
			return nil, fmt.Errorf("observe: %w", err)
		}
	}
	if err := s.usable(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if snap != nil {
		s.last = snap
	} else {
		snap = s.last
	}
	s.mu.Unlock()
	s.tr.mu.Lock()
	defer s.tr.mu.Unlock()
	if snap == nil {
		snap = &domain.UiSnapshot{URL: s.tr.topURL}
	}
	out := cloneSnapshot(snap)
	out.PostBacked = s.tr.postBacked()
	if s.tr.dialog != nil {
		addDialog(out, s.tr.dialog)
	}
	out.Seq = s.tr.observed(start)
	return out, nil
}

// targetData is what one attached target answered in phase 1 of capture.
type targetData struct {
	tree    *page.FrameTree
	snap    *domsnapshot.CaptureSnapshotResult
	treeErr error
	snapErr error
}

// frameGraph is the frames of one capture: every frame by id, in
// discovery order (parents first), and the top frame.
type frameGraph struct {
	frames map[cdp.FrameID]*frameRec
	order  []*frameRec
	top    *frameRec
}

// capture reads every frame of the page and its out-of-process iframes. It
// runs five phases: (1) frame tree and DOM snapshot of every target
// ([Session.readTargets]); (2) the frame graph with names, paths and owners
// ([buildFrameGraph]); (3) owner box deltas and the accessibility
// trees that changed ([Session.readAX]); (4) page offsets
// ([frameGraph.offsets]); (5) one stitched tree ([frameGraph.snapshot]).
func (s *Session) capture(ctx context.Context) (*domain.UiSnapshot, error) {
	s.syncOOPIFs(ctx)

	s.tr.mu.Lock()
	targets := []*tsession{s.page}
	var oops []*oopif
	for _, o := range s.tr.oopifs {
		if o.ts != nil && !o.gone {
			targets = append(targets, o.ts)
			oops = append(oops, o)
		}
	}
	counts := targetCounts{
		gens: maps.Clone(s.tr.frameGen), doms: maps.Clone(s.tr.domGen),
		styles: maps.Clone(s.tr.styleGen), worlds: maps.Clone(s.tr.frameCtx),
	}
	nd := s.tr.noDialog
	s.tr.mu.Unlock()

	data := s.readTargets(ctx, targets)
	if err := errors.Join(data[0].treeErr, data[0].snapErr); err != nil {
		return nil, err
	}
	if data[0].tree == nil {
		return nil, errors.New("page has no frame tree")
	}
	g := buildFrameGraph(s.page, data, oops, s.frameOwner(ctx), s.log)
	fresh, topErr := s.readAX(ctx, g, counts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if nd.Err() != nil {
		return nil, errDialogOpen // some frames could not answer: not a whole tree
	}
	if err := s.usable(); err != nil {
		return nil, err
	}
	if topErr != nil {
		return nil, topErr
	}
	statuses := s.storeCapture(g, fresh)
	g.offsets()
	return g.snapshot(statuses), nil
}

// readTargets reads the frame tree and DOM snapshot of every target, in
// parallel (phase 1).
func (s *Session) readTargets(ctx context.Context, targets []*tsession) []targetData {
	data := make([]targetData, len(targets))
	var wg sync.WaitGroup
	for i, ts := range targets {
		wg.Go(func() {
			res, err := call(ctx, s, ts, page.GetFrameTree, cdp.Empty{})
			data[i].tree, data[i].treeErr = res.FrameTree, err
		})
		wg.Go(func() {
			res, err := call(ctx, s, ts, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{ComputedStyles: []string{}})
			data[i].snap, data[i].snapErr = &res, err
		})
	}
	wg.Wait()
	return data
}

// ownerLookup returns the owner <iframe> element, in parent's document, of
// the out-of-process frame id that o hosts; 0 when it is unknown.
type ownerLookup func(parent *frameRec, id cdp.FrameID, o *oopif) cdp.BackendNodeID

// frameOwner asks the parent frame's target for the owner element of an
// out-of-process frame, once per frame target.
func (s *Session) frameOwner(ctx context.Context) ownerLookup {
	return func(parent *frameRec, id cdp.FrameID, o *oopif) cdp.BackendNodeID {
		if o.owner == 0 {
			if res, err := call(ctx, s, parent.ts, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: id}); err == nil {
				o.owner = res.BackendNodeID
			}
		}
		return o.owner
	}
}

// buildFrameGraph links the frames of every target, attaches their
// documents, and names them (phase 2). data[0] is page's; data[i+1] is
// oops[i]'s. It sends no command: ownerOf finds the owner element of an
// out-of-process frame.
func buildFrameGraph(page *tsession, data []targetData, oops []*oopif, ownerOf ownerLookup, log *slog.Logger) *frameGraph {
	g := &frameGraph{frames: make(map[cdp.FrameID]*frameRec)}
	g.top = g.addTree(data[0].tree, page, nil)
	owners := make(map[cdp.FrameID]cdp.BackendNodeID)
	g.hangOOPIFs(data, oops, owners, ownerOf, log)
	for _, d := range data {
		if d.snapErr == nil && d.snap != nil {
			indexSnapshot(d.snap, g.frames, owners)
		}
	}
	g.name(owners)
	return g
}

// addTree adds a frame tree under parent; it returns the tree's root
// frame, or nil when it was already known.
func (g *frameGraph) addTree(t *page.FrameTree, ts *tsession, parent *frameRec) *frameRec {
	if t == nil || t.Frame == nil || g.frames[t.Frame.ID] != nil {
		return nil
	}
	f := &frameRec{
		id: t.Frame.ID, loader: t.Frame.LoaderID,
		url: t.Frame.URL + t.Frame.URLFragment, treeName: t.Frame.Name, ts: ts,
		parentRec: parent, ownerIdx: -1,
	}
	if parent != nil {
		parent.kids = append(parent.kids, f)
	}
	g.frames[f.id] = f
	g.order = append(g.order, f)
	for _, c := range t.ChildFrames {
		g.addTree(c, ts, f)
	}
	return f
}

// hangOOPIFs hangs out-of-process iframes under their parent frame,
// parents first, and records their owner elements.
func (g *frameGraph) hangOOPIFs(data []targetData, oops []*oopif, owners map[cdp.FrameID]cdp.BackendNodeID, ownerOf ownerLookup, log *slog.Logger) {
	pending := make([]int, 0, len(oops))
	for i := range oops {
		if data[i+1].treeErr == nil && data[i+1].tree != nil {
			pending = append(pending, i)
		} else {
			log.Debug("skip out-of-process frame", slog.String("target", string(oops[i].id)),
				slog.Any("error", errors.Join(data[i+1].treeErr, data[i+1].snapErr)))
		}
	}
	for len(pending) > 0 {
		var rest []int
		for _, i := range pending {
			o, t := oops[i], data[i+1].tree
			parentID := t.Frame.ParentID
			if parentID == "" {
				parentID = o.parent
			}
			parent := g.frames[parentID]
			if parent == nil {
				rest = append(rest, i)
				continue
			}
			f := g.addTree(t, o.ts, parent)
			if f == nil {
				continue
			}
			owners[f.id] = ownerOf(parent, f.id, o)
		}
		if len(rest) == len(pending) {
			for _, i := range rest { // parent unknown: hang under the top frame
				if f := g.addTree(data[i+1].tree, oops[i].ts, g.top); f != nil {
					owners[f.id] = oops[i].owner
				}
			}
			return
		}
		pending = rest
	}
}

// name sets owners, names, titles and paths, top down, children in
// document order.
func (g *frameGraph) name(owners map[cdp.FrameID]cdp.BackendNodeID) {
	for _, f := range g.order {
		for _, k := range f.kids {
			k.owner = owners[k.id]
			if f.doc != nil && k.owner != 0 {
				if idx, ok := f.doc.byBackend[k.owner]; ok {
					k.ownerIdx = idx
				}
			}
		}
		slices.SortStableFunc(f.kids, func(a, b *frameRec) int {
			return cmp.Compare(uint(a.ownerIdx), uint(b.ownerIdx)) // unknown owners (-1) last
		})
		for i, k := range f.kids {
			k.name = frameName(f.doc, k.ownerIdx, k.treeName, i)
			if f.doc != nil {
				if t, ok := f.doc.attr(k.ownerIdx, "title"); ok {
					k.title = t
				}
			}
			if f.path == "" {
				k.path = k.name
			} else {
				k.path = f.path + "/" + k.name
			}
		}
	}
}

// targetCounts is the tracker's counts a capture began with: frame
// generations, each target's DOM and style generations, and the isolated
// world of each frame's change observer.
type targetCounts struct {
	gens   map[cdp.FrameID]uint64
	doms   map[*tsession]uint64
	styles map[*tsession]uint64
	worlds map[cdp.FrameID]worldKey
}

// domKey returns what of f's target's events a cached tree of f depends
// on (see domKey): frame-exact when f's change observer runs in f's
// target, so a change in one frame refetches that frame only.
func (c targetCounts) domKey(f *frameRec) domKey {
	if w, ok := c.worlds[f.id]; ok && w.ts == f.ts {
		return domKey{exact: true, n: c.styles[f.ts]}
	}
	return domKey{n: c.doms[f.ts]}
}

// readAX reads owner box deltas and the accessibility trees that changed,
// in parallel (phase 3). It returns the trees it fetched, to be cached, and
// the error of the top frame's tree.
func (s *Session) readAX(ctx context.Context, g *frameGraph, counts targetCounts) (map[cdp.FrameID]*axTree, error) {
	cached := s.ax.lookup(g.order)
	fresh := make(map[cdp.FrameID]*axTree)
	var fmu sync.Mutex
	var topErr error
	var wg sync.WaitGroup
	for _, f := range g.order {
		if f.parentRec != nil && f.owner != 0 {
			s.readOwnerDelta(ctx, &wg, f)
		}
		var sig uint64
		if f.doc != nil {
			sig = f.doc.sig
		}
		gen, dom := counts.gens[f.id], counts.domKey(f)
		if c := cached[f.id]; c.fresh(f.loader, gen, dom, sig) {
			f.nodes = c.nodes
			continue
		}
		s.ax.fetching(f.id)
		wg.Go(func() {
			res, err := call(ctx, s, f.ts, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: f.id})
			if err != nil {
				if f == g.top {
					fmu.Lock()
					topErr = err
					fmu.Unlock()
				}
				s.log.Debug("accessibility tree", slog.String("frame", string(f.id)), slog.String("error", err.Error()))
				return
			}
			f.nodes = res.Nodes
			fmu.Lock()
			fresh[f.id] = &axTree{loader: f.loader, gen: gen, dom: dom, sig: sig, nodes: res.Nodes}
			fmu.Unlock()
		})
	}
	wg.Wait()
	return fresh, topErr
}

// readOwnerDelta sets the content-box offset of f's owner element: from
// the cache when the parent document is unchanged, else from
// DOM.getBoxModel on the parent's target, run on wg.
func (s *Session) readOwnerDelta(ctx context.Context, wg *sync.WaitGroup, f *frameRec) {
	p := f.parentRec
	var sig uint64
	if p.doc != nil {
		sig = p.doc.sig
	}
	if p.doc != nil {
		if d, ok := s.ax.ownerDelta(f.id, f.owner, p.loader, sig); ok {
			f.delta = d
			return
		}
	}
	wg.Go(func() {
		res, err := call(ctx, s, p.ts, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: f.owner})
		if err == nil && res.Model != nil && len(res.Model.Content) >= 2 && len(res.Model.Border) >= 2 {
			f.delta = [2]float64{res.Model.Content[0] - res.Model.Border[0], res.Model.Content[1] - res.Model.Border[1]}
			if p.doc != nil {
				s.ax.storeOwnerDelta(f.id, ownerBox{owner: f.owner, loader: p.loader, sig: sig, delta: f.delta})
			}
		}
	})
}

// storeCapture keeps the fetched trees and each frame's host target, drops
// the cache of frames that are gone, and returns each frame's document
// status.
func (s *Session) storeCapture(g *frameGraph, fresh map[cdp.FrameID]*axTree) map[cdp.FrameID]docStatus {
	s.ax.store(g.frames, fresh)
	s.mu.Lock()
	clear(s.frameTS)
	for _, f := range g.order {
		s.frameTS[f.id] = f.ts
	}
	s.mu.Unlock()
	s.tr.mu.Lock()
	defer s.tr.mu.Unlock()
	statuses := make(map[cdp.FrameID]docStatus, len(g.order))
	for _, f := range g.order {
		statuses[f.id] = s.tr.status[f.id]
	}
	return statuses
}

// offsets computes each frame's page offset, top down: page = document
// coordinates + offset (phase 4).
func (g *frameGraph) offsets() {
	for _, f := range g.order {
		p := f.parentRec
		if p == nil {
			continue
		}
		f.offX, f.offY = p.offX, p.offY
		if p.doc != nil && f.ownerIdx >= 0 {
			if r, ok := p.doc.layout[f.ownerIdx]; ok {
				f.offX += r.X + f.delta[0]
				f.offY += r.Y + f.delta[1]
			}
		}
		if f.doc != nil {
			f.offX -= f.doc.d.ScrollOffsetX
			f.offY -= f.doc.d.ScrollOffsetY
		}
	}
}

// snapshot stitches the frames into one raw snapshot with each frame's
// HTTP status and the page's worst one (phase 5).
func (g *frameGraph) snapshot(statuses map[cdp.FrameID]docStatus) *domain.UiSnapshot {
	top, frames := g.top, g.frames
	a := &assembler{seen: make(map[*frameRec]bool)}
	a.frame(top, -1)
	a.paths()
	snap := &domain.UiSnapshot{URL: top.url, Nodes: a.nodes, Frames: a.frames}
	if top.doc != nil {
		snap.Title = top.doc.str(top.doc.d.Title)
	}
	var worst docStatus
	for i := range snap.Frames {
		fr := &snap.Frames[i]
		st := statuses[cdp.FrameID(fr.ID)]
		if f := frames[cdp.FrameID(fr.ID)]; f != nil && st.loader != "" && st.loader != f.loader {
			continue // the status of an earlier document
		}
		fr.HTTPStatus = st.status
		if (st.status < 200 || st.status >= 400) && st.status != 0 && st.seq > worst.seq {
			worst = st
		}
	}
	if worst.status != 0 {
		snap.HTTPStatus = worst.status
	} else if len(snap.Frames) > 0 {
		snap.HTTPStatus = snap.Frames[0].HTTPStatus
	}
	return snap
}

// indexSnapshot attaches the documents of one DOM snapshot to their frames
// and records the owner element of every same-process child frame.
func indexSnapshot(snap *domsnapshot.CaptureSnapshotResult, frames map[cdp.FrameID]*frameRec, owners map[cdp.FrameID]cdp.BackendNodeID) {
	views := make([]*docView, len(snap.Documents))
	for i, d := range snap.Documents {
		v := newDocView(snap.Strings, d)
		views[i] = v
		if f := frames[cdp.FrameID(v.str(d.FrameID))]; f != nil && f.doc == nil {
			f.doc = v
		}
	}
	for _, v := range views {
		cdi := v.d.Nodes.ContentDocumentIndex
		if cdi == nil {
			continue
		}
		for k, nodeIdx := range cdi.Index {
			if k >= len(cdi.Value) || int(cdi.Value[k]) >= len(views) || int(nodeIdx) >= len(v.d.Nodes.BackendNodeID) {
				continue
			}
			child := views[cdi.Value[k]]
			owners[cdp.FrameID(child.str(child.d.FrameID))] = v.d.Nodes.BackendNodeID[nodeIdx]
		}
	}
}

func newDocView(strs []string, d *domsnapshot.DocumentSnapshot) *docView {
	v := &docView{strs: strs, d: d, layout: make(map[int]domain.Rect)}
	n := d.Nodes
	if n == nil {
		n = &domsnapshot.NodeTreeSnapshot{}
		d.Nodes = n
	}
	v.byBackend = make(map[cdp.BackendNodeID]int, len(n.BackendNodeID))
	for i, id := range n.BackendNodeID {
		v.byBackend[id] = i
	}
	var h maphash.Hash
	h.SetSeed(sigSeed)
	w := func(x int64) {
		var b [8]byte
		for i := range b {
			b[i] = byte(x >> (8 * i))
		}
		h.Write(b[:])
	}
	h.WriteString(v.str(d.DocumentURL))
	for i := range n.BackendNodeID {
		w(int64(n.BackendNodeID[i]))
		if i < len(n.ParentIndex) {
			w(n.ParentIndex[i])
		}
		if i < len(n.NodeName) {
			w(int64(n.NodeName[i]))
		}
		if i < len(n.NodeValue) {
			h.WriteString(v.str(n.NodeValue[i]))
		}
		if i < len(n.Attributes) {
			for _, a := range n.Attributes[i] {
				h.WriteString(v.str(domsnapshot.StringIndex(a)))
				h.WriteByte(0)
			}
		}
		h.WriteByte(1)
	}
	for _, r := range []*domsnapshot.RareStringData{n.InputValue, n.TextValue} {
		if r == nil {
			continue
		}
		for k, idx := range r.Index {
			w(idx)
			if k < len(r.Value) {
				h.WriteString(v.str(r.Value[k]))
			}
		}
		h.WriteByte(2)
	}
	for _, r := range []*domsnapshot.RareBooleanData{n.InputChecked, n.OptionSelected} {
		if r == nil {
			continue
		}
		for _, idx := range r.Index {
			w(idx)
		}
		h.WriteByte(3)
	}
	if l := d.Layout; l != nil {
		for li, ni := range l.NodeIndex {
			w(ni)
			if li >= len(l.Bounds) || len(l.Bounds[li]) < 4 {
				continue
			}
			b := l.Bounds[li]
			r := domain.Rect{X: b[0], Y: b[1], W: b[2], H: b[3]}
			if old, ok := v.layout[int(ni)]; ok {
				r = union(old, r)
			}
			v.layout[int(ni)] = r
		}
	}
	v.sig = h.Sum64()
	return v
}

func (v *docView) str(i domsnapshot.StringIndex) string {
	if i < 0 || int(i) >= len(v.strs) {
		return ""
	}
	return v.strs[i]
}

// attr returns an attribute of the node at index idx.
func (v *docView) attr(idx int, name string) (string, bool) {
	if v == nil || idx < 0 || idx >= len(v.d.Nodes.Attributes) {
		return "", false
	}
	a := v.d.Nodes.Attributes[idx]
	for i := 0; i+1 < len(a); i += 2 {
		if strings.EqualFold(v.str(domsnapshot.StringIndex(a[i])), name) {
			return v.str(domsnapshot.StringIndex(a[i+1])), true
		}
	}
	return "", false
}

func (v *docView) tag(idx int) string {
	if v == nil || idx < 0 || idx >= len(v.d.Nodes.NodeName) {
		return ""
	}
	return strings.ToLower(v.str(v.d.Nodes.NodeName[idx]))
}

var cssIdent = regexp.MustCompile(`^-?[A-Za-z_][A-Za-z0-9_-]*$`)

// cssHint is the cached, non-semantic CSS hint of an element: "#id", else
// "tag.class1.class2", else "".
func (v *docView) cssHint(idx int) string {
	if v == nil || idx < 0 || idx >= len(v.d.Nodes.NodeType) || v.d.Nodes.NodeType[idx] != 1 {
		return ""
	}
	if id, ok := v.attr(idx, "id"); ok && cssIdent.MatchString(id) {
		return "#" + id
	}
	cls, _ := v.attr(idx, "class")
	var b strings.Builder
	for _, c := range strings.Fields(cls) {
		if cssIdent.MatchString(c) {
			b.WriteByte('.')
			b.WriteString(c)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return v.tag(idx) + b.String()
}

func frameName(parent *docView, ownerIdx int, treeName string, i int) string {
	if n, ok := parent.attr(ownerIdx, "name"); ok && n != "" {
		return n
	}
	if id, ok := parent.attr(ownerIdx, "id"); ok && id != "" {
		return id
	}
	if treeName != "" {
		return treeName
	}
	return "frame" + strconv.Itoa(i+1)
}

func union(a, b domain.Rect) domain.Rect {
	if a.Empty() {
		return b
	}
	if b.Empty() {
		return a
	}
	x0, y0 := min(a.X, b.X), min(a.Y, b.Y)
	x1, y1 := max(a.X+a.W, b.X+b.W), max(a.Y+a.H, b.Y+b.H)
	return domain.Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
}

// assembler stitches the frames' accessibility trees into one node list.
type assembler struct {
	nodes  []domain.Node
	frames []domain.Frame
	seen   map[*frameRec]bool
}

func (a *assembler) frame(f *frameRec, parent int) {
	if a.seen[f] {
		return
	}
	a.seen[f] = true
	fi := len(a.frames)
	a.frames = append(a.frames, domain.Frame{ID: string(f.id), Name: f.name, Title: f.title, Path: f.path, URL: f.url, Root: -1})
	byOwner := make(map[cdp.BackendNodeID][]*frameRec)
	for _, k := range f.kids {
		if k.owner != 0 {
			byOwner[k.owner] = append(byOwner[k.owner], k)
		}
	}
	if len(f.nodes) > 0 {
		w := &axWalk{a: a, f: f, byOwner: byOwner,
			byID: make(map[accessibility.NodeID]*accessibility.Node, len(f.nodes)),
			done: make(map[accessibility.NodeID]bool, len(f.nodes))}
		for _, n := range f.nodes {
			w.byID[n.NodeID] = n
		}
		root := f.nodes[0]
		for _, n := range f.nodes {
			if n.ParentID == "" {
				root = n
				break
			}
		}
		a.frames[fi].Root = w.walk(root, parent, true)
	}
	attach := a.frames[fi].Root
	if attach < 0 {
		attach = parent
	}
	for _, k := range f.kids {
		a.frame(k, attach) // frames whose owner the tree did not show
	}
}

type axWalk struct {
	a       *assembler
	f       *frameRec
	byID    map[accessibility.NodeID]*accessibility.Node
	byOwner map[cdp.BackendNodeID][]*frameRec
	done    map[accessibility.NodeID]bool
}

// walk adds n (unless ignored or layout noise, see [axRole]) under parent
// and recurses; it returns n's index, or -1 when n was left out.
func (w *axWalk) walk(n *accessibility.Node, parent int, root bool) int {
	if w.done[n.NodeID] {
		return -1
	}
	w.done[n.NodeID] = true
	idx, kept := -1, parent
	role, noise := axRole(axString(n.Role))
	if (!n.Ignored && !noise) || root {
		idx = w.a.add(w.f, n, role, parent)
		kept = idx
	}
	for _, cid := range n.ChildIDs {
		if c := w.byID[cid]; c != nil {
			w.walk(c, kept, false)
		}
	}
	if n.BackendDOMNodeID != 0 {
		for _, k := range w.byOwner[n.BackendDOMNodeID] {
			w.a.frame(k, kept)
		}
	}
	return idx
}

func (a *assembler) add(f *frameRec, n *accessibility.Node, role string, parent int) int {
	idx := len(a.nodes)
	node := domain.Node{
		Index:       idx,
		Role:        role,
		Name:        axString(n.Name),
		Value:       axString(n.Value),
		Description: axString(n.Description),
		Frame:       f.path,
		Parent:      parent,
	}
	for _, p := range n.Properties {
		if p == nil {
			continue
		}
		switch p.Name {
		case accessibility.PropertyNameFocused:
			node.States.Focused = axBool(p.Value)
		case accessibility.PropertyNameFocusable:
			node.States.Focusable = axBool(p.Value)
		case accessibility.PropertyNameDisabled:
			node.States.Disabled = axBool(p.Value)
		case accessibility.PropertyNameEditable:
			v := axString(p.Value)
			node.States.Editable = v != "" && v != "false"
		case accessibility.PropertyNameChecked:
			node.States.Checked = axString(p.Value) == "true"
		case accessibility.PropertyNameSelected:
			node.States.Selected = axBool(p.Value)
		case accessibility.PropertyNameExpanded:
			node.States.Expanded = axBool(p.Value)
		case accessibility.PropertyNameHidden:
			node.States.Hidden = axBool(p.Value)
		case accessibility.PropertyNameModal:
			node.States.Modal = axBool(p.Value)
		}
	}
	if bid := n.BackendDOMNodeID; bid != 0 {
		node.Ref = string(f.id) + ":" + strconv.FormatInt(int64(bid), 10) + ":" + string(f.loader)
		if f.doc != nil {
			if di, ok := f.doc.byBackend[bid]; ok {
				if r, ok := f.doc.layout[di]; ok {
					node.Bounds = domain.Rect{X: r.X + f.offX, Y: r.Y + f.offY, W: r.W, H: r.H}
				}
				node.CSS = f.doc.cssHint(di)
				if f.doc.tag(di) == "input" {
					if t, _ := f.doc.attr(di, "type"); strings.EqualFold(t, "password") {
						node.States.Password = true
						node.Sensitive = true
					}
				}
			}
		}
	} else if parent >= 0 && a.nodes[parent].Frame == f.path {
		node.Bounds = a.nodes[parent].Bounds // inline text boxes share their text's box
	}
	a.nodes = append(a.nodes, node)
	if parent >= 0 {
		a.nodes[parent].Children = append(a.nodes[parent].Children, idx)
	}
	return idx
}

// paths fills Path ("0.3.1", "content/0.2") and Depth from the roots.
func (a *assembler) paths() {
	var visit func(i int, path string, depth int)
	visit = func(i int, path string, depth int) {
		n := &a.nodes[i]
		n.Path, n.Depth = path, depth
		for k, c := range n.Children {
			cp := path + "." + strconv.Itoa(k)
			if a.nodes[c].Frame != n.Frame {
				cp = a.nodes[c].Frame + "/0"
			}
			visit(c, cp, depth+1)
		}
	}
	for i := range a.nodes {
		if a.nodes[i].Parent < 0 {
			p := "0"
			if a.nodes[i].Frame != "" {
				p = a.nodes[i].Frame + "/0"
			}
			visit(i, p, 0)
		}
	}
}

// addDialog appends the synthesized nodes of an open JavaScript dialog: an
// alertdialog named by the message, with buttons "OK" and "Cancel".
func addDialog(s *domain.UiSnapshot, d *dialogState) {
	s.Dialog = &domain.Dialog{Type: d.typ, Message: d.msg}
	parent, path, depth := -1, "dialog", 0
	if len(s.Nodes) > 0 && s.Nodes[0].Parent < 0 {
		parent = 0
		path = s.Nodes[0].Path + "." + strconv.Itoa(len(s.Nodes[0].Children))
		depth = 1
	}
	di := len(s.Nodes)
	s.Nodes = append(s.Nodes, domain.Node{
		Index: di, Path: path, Role: domain.RoleAlertDialog, Name: d.msg,
		States: domain.NodeStates{Modal: true, Focused: true}, Parent: parent, Depth: depth,
		Children: []int{di + 1, di + 2},
	})
	if parent >= 0 {
		s.Nodes[parent].Children = append(s.Nodes[parent].Children, di)
	}
	for k, b := range []struct{ name, ref string }{{"OK", refDialogAccept}, {"Cancel", refDialogDismiss}} {
		s.Nodes = append(s.Nodes, domain.Node{
			Index: di + 1 + k, Path: path + "." + strconv.Itoa(k), Role: domain.RoleButton, Name: b.name,
			Description: d.msg, States: domain.NodeStates{Focusable: true}, Parent: di, Depth: depth + 1,
			Ref: b.ref,
		})
	}
}

func cloneSnapshot(s *domain.UiSnapshot) *domain.UiSnapshot {
	out := *s
	out.Nodes = make([]domain.Node, len(s.Nodes))
	copy(out.Nodes, s.Nodes)
	for i := range out.Nodes {
		if c := out.Nodes[i].Children; c != nil {
			out.Nodes[i].Children = append([]int(nil), c...)
		}
	}
	out.Frames = append([]domain.Frame(nil), s.Frames...)
	if s.Dialog != nil {
		d := *s.Dialog
		out.Dialog = &d
	}
	return &out
}

// axString renders an accessibility value as text.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var x any
	if err := json.Unmarshal(v.Value, &x); err != nil {
		return string(v.Value)
	}
	switch t := x.(type) {
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case nil:
		return ""
	}
	return string(v.Value)
}

func axBool(v *accessibility.Value) bool { return axString(v) == "true" }

// syncOOPIFs attaches the out-of-process iframes the page announced and
// drops those that went away.
func (s *Session) syncOOPIFs(ctx context.Context) {
	s.tr.mu.Lock()
	var attach []*oopif
	var drop []*tsession
	for id, o := range s.tr.oopifs {
		switch {
		case o.gone:
			if o.ts != nil {
				drop = append(drop, o.ts)
			}
			delete(s.tr.oopifs, id)
			delete(s.tr.domGen, o.ts)
			delete(s.tr.styleGen, o.ts)
		case o.ts == nil && !o.failed:
			attach = append(attach, o)
		}
	}
	s.tr.mu.Unlock()
	for _, ts := range drop {
		go ts.cancel() // detaches; never blocks an observation
	}
	for _, o := range attach {
		ts := &tsession{id: o.id, oopif: true}
		octx, cancel := chromedp.NewContext(s.tabCtx,
			chromedp.WithTargetID(o.id), chromedp.WithDetachOnCancel(), chromedp.WithListener(s.tr.listener(ts)))
		ts.ctx, ts.cancel = octx, cancel
		err := startTarget(ctx, octx, cancel, s.timeout)
		if err == nil {
			ts.t = chromedp.FromContext(octx).Target
			err = s.setupTarget(ctx, ts)
		}
		s.mu.Lock()
		s.tr.mu.Lock()
		if err != nil || s.closed {
			o.failed = err != nil
			s.tr.mu.Unlock()
			s.mu.Unlock()
			if err != nil {
				s.log.Debug("attach out-of-process frame", slog.String("target", string(o.id)), slog.String("error", err.Error()))
			}
			go cancel()
			continue
		}
		o.ts = ts
		s.tr.mu.Unlock()
		s.mu.Unlock()
	}
}
