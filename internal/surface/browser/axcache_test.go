package browser

import (
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
)

func TestAXTreeFresh(t *testing.T) {
	t.Parallel()
	tree := &axTree{loader: "L1", gen: 3, dom: 5, sig: 7}
	tests := []struct {
		name     string
		tree     *axTree
		loader   cdp.LoaderID
		gen, dom uint64
		sig      uint64
		want     bool
	}{
		{name: "same state", tree: tree, loader: "L1", gen: 3, dom: 5, sig: 7, want: true},
		{name: "no tree", loader: "L1", gen: 3, dom: 5, sig: 7},
		{name: "new document", tree: tree, loader: "L2", gen: 3, dom: 5, sig: 7},
		{name: "frame changed", tree: tree, loader: "L1", gen: 4, dom: 5, sig: 7},
		{name: "target DOM changed", tree: tree, loader: "L1", gen: 3, dom: 6, sig: 7},
		{name: "silent change in the DOM snapshot", tree: tree, loader: "L1", gen: 3, dom: 5, sig: 8},
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
