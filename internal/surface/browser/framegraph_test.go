package browser

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
)

// snapBuilder builds a DOMSnapshot result by hand, as CaptureSnapshot
// returns it: one string table and documents of index-based nodes.
type snapBuilder struct {
	res  domsnapshot.CaptureSnapshotResult
	strs map[string]domsnapshot.StringIndex
}

func (b *snapBuilder) str(v string) domsnapshot.StringIndex {
	if b.strs == nil {
		b.strs = make(map[string]domsnapshot.StringIndex)
	}
	if i, ok := b.strs[v]; ok {
		return i
	}
	i := domsnapshot.StringIndex(len(b.res.Strings))
	b.res.Strings = append(b.res.Strings, v)
	b.strs[v] = i
	return i
}

// snapNode is one element: its backend id, tag, attributes, box, and the
// index of the document it hosts (-1: none).
type snapNode struct {
	backend cdp.BackendNodeID
	tag     string
	attrs   []string
	box     []float64
	content int
}

func (b *snapBuilder) doc(frame cdp.FrameID, scrollY float64, nodes ...snapNode) {
	d := &domsnapshot.DocumentSnapshot{
		FrameID: b.str(string(frame)), DocumentURL: b.str("http://127.0.0.1/" + string(frame)),
		Title: b.str("title of " + string(frame)), ScrollOffsetY: scrollY,
		Nodes:  &domsnapshot.NodeTreeSnapshot{ContentDocumentIndex: &domsnapshot.RareIntegerData{}},
		Layout: &domsnapshot.LayoutTreeSnapshot{},
	}
	for i, n := range nodes {
		d.Nodes.BackendNodeID = append(d.Nodes.BackendNodeID, n.backend)
		d.Nodes.ParentIndex = append(d.Nodes.ParentIndex, int64(i)-1)
		d.Nodes.NodeType = append(d.Nodes.NodeType, 1)
		d.Nodes.NodeName = append(d.Nodes.NodeName, b.str(n.tag))
		var attrs domsnapshot.ArrayOfStrings
		for _, a := range n.attrs {
			attrs = append(attrs, int64(b.str(a)))
		}
		d.Nodes.Attributes = append(d.Nodes.Attributes, attrs)
		if n.box != nil {
			d.Layout.NodeIndex = append(d.Layout.NodeIndex, int64(i))
			d.Layout.Bounds = append(d.Layout.Bounds, n.box)
		}
		if n.content >= 0 {
			d.Nodes.ContentDocumentIndex.Index = append(d.Nodes.ContentDocumentIndex.Index, int64(i))
			d.Nodes.ContentDocumentIndex.Value = append(d.Nodes.ContentDocumentIndex.Value, int64(n.content))
		}
	}
	b.res.Documents = append(b.res.Documents, d)
}

func frameTree(id cdp.FrameID, parent cdp.FrameID, name string, kids ...*page.FrameTree) *page.FrameTree {
	return &page.FrameTree{
		Frame:       &cdp.Frame{ID: id, ParentID: parent, LoaderID: cdp.LoaderID("L" + id), URL: "http://127.0.0.1/" + string(id), Name: name},
		ChildFrames: kids,
	}
}

// TestBuildFrameGraph builds, without a browser, the frame graph of a page
// with two same-process iframes (owners in reverse tree order, one named by
// its owner's name, one by its id, the first holding a nested one), an
// out-of-process iframe under a same-process one, an out-of-process iframe
// whose parent is unknown, and one whose target did not answer.
func TestBuildFrameGraph(t *testing.T) {
	t.Parallel()
	pageTS, oopA, oopB, oopC := &tsession{id: "TOP"}, &tsession{id: "OA", oopif: true}, &tsession{id: "OB", oopif: true}, &tsession{id: "OC", oopif: true}

	var top snapBuilder
	top.doc("TOP", 0,
		snapNode{backend: 1, tag: "HTML", content: -1},
		snapNode{backend: 10, tag: "IFRAME", attrs: []string{"id", "second", "title", "Second"}, box: []float64{0, 200, 300, 100}, content: 2},
		snapNode{backend: 11, tag: "IFRAME", attrs: []string{"name", "first"}, box: []float64{0, 50, 300, 100}, content: 1},
	)
	// Document 1 is frame S1 ("first"), document 2 is S2 ("second").
	top.doc("S1", 0, snapNode{backend: 20, tag: "HTML", content: -1},
		snapNode{backend: 21, tag: "IFRAME", box: []float64{5, 5, 50, 50}, content: 3})
	top.doc("S2", 30, snapNode{backend: 30, tag: "HTML", content: -1},
		snapNode{backend: 31, tag: "IFRAME", attrs: []string{"name", "remote"}, box: []float64{10, 40, 100, 100}, content: -1})
	top.doc("N1", 0, snapNode{backend: 40, tag: "HTML", content: -1})

	var remote snapBuilder
	remote.doc("OA", 0, snapNode{backend: 50, tag: "HTML", box: []float64{0, 0, 100, 100}, content: -1})

	data := []targetData{
		{tree: frameTree("TOP", "", "", frameTree("S2", "TOP", ""), frameTree("S1", "TOP", "", frameTree("N1", "S1", "inner"))), snap: &top.res},
		{tree: frameTree("OA", "S2", ""), snap: &remote.res},
		{tree: frameTree("OB", "", "orphan")},
		{treeErr: errors.New("target gone")},
	}
	oops := []*oopif{{id: "OA", ts: oopA, parent: "S2"}, {id: "OB", ts: oopB, parent: "NOWHERE", owner: 99}, {id: "OC", ts: oopC, parent: "TOP"}}
	var asked []string
	ownerOf := func(parent *frameRec, id cdp.FrameID, o *oopif) cdp.BackendNodeID {
		asked = append(asked, string(parent.id)+">"+string(id))
		if id == "OA" {
			return 31
		}
		return 0
	}

	g := buildFrameGraph(pageTS, data, oops, ownerOf, slog.New(slog.DiscardHandler))
	g.offsets()

	if g.top == nil || g.top.id != "TOP" {
		t.Fatalf("top = %+v, want frame TOP", g.top)
	}
	if len(asked) != 1 || asked[0] != "S2>OA" {
		t.Errorf("owner lookups = %v, want only S2>OA (the orphan keeps its known owner)", asked)
	}
	if g.frames["OC"] != nil {
		t.Error("the frame whose target did not answer is in the graph")
	}
	type want struct {
		parent     cdp.FrameID
		name, path string
		title      string
		owner      cdp.BackendNodeID
		ts         *tsession
		offY       float64
	}
	wants := map[cdp.FrameID]want{
		"TOP": {name: "", path: "", ts: pageTS},
		"S1":  {parent: "TOP", name: "first", path: "first", owner: 11, ts: pageTS, offY: 50},
		"S2":  {parent: "TOP", name: "second", path: "second", title: "Second", owner: 10, ts: pageTS, offY: 200 - 30},
		"N1":  {parent: "S1", name: "inner", path: "first/inner", owner: 21, ts: pageTS, offY: 55},
		"OA":  {parent: "S2", name: "remote", path: "second/remote", owner: 31, ts: oopA, offY: 170 + 40},
		"OB":  {parent: "TOP", name: "orphan", path: "orphan", owner: 99, ts: oopB},
	}
	if len(g.frames) != len(wants) || len(g.order) != len(wants) {
		t.Errorf("graph has %d frames (%d in order), want %d", len(g.frames), len(g.order), len(wants))
	}
	for id, w := range wants {
		f := g.frames[id]
		if f == nil {
			t.Errorf("frame %s missing", id)
			continue
		}
		var parent cdp.FrameID
		if f.parentRec != nil {
			parent = f.parentRec.id
		}
		if parent != w.parent || f.name != w.name || f.path != w.path || f.title != w.title || f.owner != w.owner || f.ts != w.ts {
			t.Errorf("frame %s: parent %q name %q path %q title %q owner %d; want parent %q name %q path %q title %q owner %d (right target %v)",
				id, parent, f.name, f.path, f.title, f.owner, w.parent, w.name, w.path, w.title, w.owner, f.ts == w.ts)
		}
		if f.offY != w.offY {
			t.Errorf("frame %s: page offset y %g, want %g", id, f.offY, w.offY)
		}
		if f.loader != cdp.LoaderID("L"+id) {
			t.Errorf("frame %s: loader %q", id, f.loader)
		}
	}
	if kids := g.top.kids; len(kids) != 3 || kids[0].id != "S2" || kids[1].id != "S1" || kids[2].id != "OB" {
		var ids []cdp.FrameID
		for _, k := range kids {
			ids = append(ids, k.id)
		}
		t.Errorf("top's children = %v, want [S2 S1 OB]: owners in document order, unknown owner last", ids)
	}
	for _, f := range g.order {
		if f.parentRec != nil && indexOf(g.order, f.parentRec) > indexOf(g.order, f) {
			t.Errorf("frame %s comes before its parent %s", f.id, f.parentRec.id)
		}
	}
	if g.frames["OA"].doc == nil || g.frames["S2"].doc == nil || g.frames["OB"].doc != nil {
		t.Error("documents attached to the wrong frames")
	}
}

func indexOf(order []*frameRec, f *frameRec) int {
	for i, x := range order {
		if x == f {
			return i
		}
	}
	return -1
}
