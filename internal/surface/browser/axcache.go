package browser

import (
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
)

// axTree is the last accessibility tree of one frame and the state it was
// read in.
type axTree struct {
	loader cdp.LoaderID
	gen    uint64
	dom    uint64
	sig    uint64
	nodes  []*accessibility.Node
}

// fresh reports whether the tree still describes a frame whose document is
// loader, whose frame and DOM generations are gen and dom, and whose DOM
// snapshot signature is sig.
func (t *axTree) fresh(loader cdp.LoaderID, gen, dom, sig uint64) bool {
	return t != nil && t.loader == loader && t.gen == gen && t.dom == dom && t.sig == sig
}

// axCache keeps the last accessibility tree of each frame, so a capture
// asks Chromium only for the trees of frames that changed. It is safe for
// concurrent use.
type axCache struct {
	mu    sync.Mutex
	trees map[cdp.FrameID]*axTree
}

func newAXCache() *axCache {
	return &axCache{trees: make(map[cdp.FrameID]*axTree)}
}

// lookup returns the cached tree of each frame (nil when none).
func (c *axCache) lookup(frames []*frameRec) map[cdp.FrameID]*axTree {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[cdp.FrameID]*axTree, len(frames))
	for _, f := range frames {
		out[f.id] = c.trees[f.id]
	}
	return out
}

// store drops the trees of frames not in present and keeps fresh.
func (c *axCache) store(present map[cdp.FrameID]*frameRec, fresh map[cdp.FrameID]*axTree) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.trees {
		if present[id] == nil {
			delete(c.trees, id)
		}
	}
	for id, t := range fresh {
		c.trees[id] = t
	}
}

// reset forgets every tree.
func (c *axCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.trees)
}
