package browser

import (
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
)

func TestAXTreeFresh(t *testing.T) {
	t.Parallel()
	tree := &axTree{loader: "L1", gen: 3, dom: domKey{n: 5}, sig: 7}
	exact := &axTree{loader: "L1", gen: 3, dom: domKey{exact: true, n: 5}, sig: 7}
	tests := []struct {
		name   string
		tree   *axTree
		loader cdp.LoaderID
		gen    uint64
		dom    domKey
		sig    uint64
		want   bool
	}{
		{name: "same state", tree: tree, loader: "L1", gen: 3, dom: domKey{n: 5}, sig: 7, want: true},
		{name: "no tree", loader: "L1", gen: 3, dom: domKey{n: 5}, sig: 7},
		{name: "new document", tree: tree, loader: "L2", gen: 3, dom: domKey{n: 5}, sig: 7},
		{name: "frame changed", tree: tree, loader: "L1", gen: 4, dom: domKey{n: 5}, sig: 7},
		{name: "target DOM changed", tree: tree, loader: "L1", gen: 3, dom: domKey{n: 6}, sig: 7},
		{name: "silent change in the DOM snapshot", tree: tree, loader: "L1", gen: 3, dom: domKey{n: 5}, sig: 8},
		{name: "frame-exact, same state", tree: exact, loader: "L1", gen: 3, dom: domKey{exact: true, n: 5}, sig: 7, want: true},
		{name: "frame-exact, target restyled", tree: exact, loader: "L1", gen: 3, dom: domKey{exact: true, n: 6}, sig: 7},
		{name: "frame-exact tree, frame lost its observer", tree: exact, loader: "L1", gen: 3, dom: domKey{n: 5}, sig: 7},
		{name: "target-wide tree, frame gained its observer", tree: tree, loader: "L1", gen: 3, dom: domKey{exact: true, n: 5}, sig: 7},
	}
	for _, tt := range tests {
		if got := tt.tree.fresh(tt.loader, tt.gen, tt.dom, tt.sig); got != tt.want {
			t.Errorf("%s: fresh = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAXCacheDropsGoneFrames(t *testing.T) {
	t.Parallel()
	c := newAXCache()
	a, b := &frameRec{id: "A"}, &frameRec{id: "B"}
	ta := &axTree{loader: "LA", nodes: []*accessibility.Node{{NodeID: "1"}}}
	tb := &axTree{loader: "LB"}
	c.store(map[cdp.FrameID]*frameRec{"A": a, "B": b}, map[cdp.FrameID]*axTree{"A": ta, "B": tb})
	if got := c.lookup([]*frameRec{a, b}); got["A"] != ta || got["B"] != tb {
		t.Fatalf("lookup after store = %v, want both trees", got)
	}
	// B is gone; A's tree was reused, so nothing fresh for it.
	c.store(map[cdp.FrameID]*frameRec{"A": a}, nil)
	got := c.lookup([]*frameRec{a, b})
	if got["A"] != ta {
		t.Errorf("tree of A = %v after a capture that reused it, want kept", got["A"])
	}
	if got["B"] != nil {
		t.Errorf("tree of B = %v after B left the page, want dropped", got["B"])
	}
	c.reset()
	if got := c.lookup([]*frameRec{a}); got["A"] != nil {
		t.Errorf("tree of A = %v after reset, want none", got["A"])
	}
}

func TestAXCacheOwnerDelta(t *testing.T) {
	t.Parallel()
	c := newAXCache()
	c.storeOwnerDelta("F", ownerBox{owner: 9, loader: "LP", sig: 11, delta: [2]float64{3, 4}})
	tests := []struct {
		name   string
		frame  cdp.FrameID
		owner  cdp.BackendNodeID
		loader cdp.LoaderID
		sig    uint64
		want   bool
	}{
		{name: "same owner in the same parent document", frame: "F", owner: 9, loader: "LP", sig: 11, want: true},
		{name: "another frame", frame: "G", owner: 9, loader: "LP", sig: 11},
		{name: "another owner element", frame: "F", owner: 10, loader: "LP", sig: 11},
		{name: "parent document replaced", frame: "F", owner: 9, loader: "LQ", sig: 11},
		{name: "parent restyled or moved (signature)", frame: "F", owner: 9, loader: "LP", sig: 12},
	}
	for _, tt := range tests {
		d, ok := c.ownerDelta(tt.frame, tt.owner, tt.loader, tt.sig)
		if ok != tt.want {
			t.Errorf("%s: hit = %v, want %v", tt.name, ok, tt.want)
		}
		if ok && d != [2]float64{3, 4} {
			t.Errorf("%s: delta = %v, want [3 4]", tt.name, d)
		}
	}
	// A frame that left the page loses its offset; reset forgets all.
	c.store(map[cdp.FrameID]*frameRec{}, nil)
	if _, ok := c.ownerDelta("F", 9, "LP", 11); ok {
		t.Error("offset of a frame that left the page was kept")
	}
	c.storeOwnerDelta("F", ownerBox{owner: 9, loader: "LP", sig: 11})
	c.reset()
	if _, ok := c.ownerDelta("F", 9, "LP", 11); ok {
		t.Error("offset kept after reset")
	}
}
