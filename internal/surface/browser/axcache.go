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
	dom    domKey
	sig    uint64
	nodes  []*accessibility.Node
}

// domKey is the part of a frame's state that its target's events count.
// A frame whose change observer runs (an isolated world the tracker
// knows) counts its own DOM mutations, input and focus moves in its frame
// generation, and its DOMSnapshot signature covers the rest of its
// document, so only its target's media-query changes (a restyle no
// mutation announces) are counted here: exact is true and n is the
// target's style generation. A frame without a known world falls back to
// every DOM event of its target (n is the target's DOM generation), as
// before frame-exact invalidation: a change in any frame of the target
// refetches it.
type domKey struct {
	exact bool
	n     uint64
}

// fresh reports whether the tree still describes a frame whose document is
// loader, whose frame generation is gen, whose target's counted DOM state
// is dom, and whose DOM snapshot signature is sig.
func (t *axTree) fresh(loader cdp.LoaderID, gen uint64, dom domKey, sig uint64) bool {
	return t != nil && t.loader == loader && t.gen == gen && t.dom == dom && t.sig == sig
}

// ownerBox is the content-box offset of a frame's owner <iframe> (content
// origin minus border origin) and the state of the parent document it was
// read in.
type ownerBox struct {
	owner  cdp.BackendNodeID
	loader cdp.LoaderID // the parent document's
	sig    uint64       // the parent document's DOMSnapshot signature
	delta  [2]float64
}

// axCache keeps the last accessibility tree of each frame and the box
// offset of each frame's owner element, so a capture asks Chromium only
// for what changed. It is safe for concurrent use.
type axCache struct {
	mu     sync.Mutex
	trees  map[cdp.FrameID]*axTree
	owners map[cdp.FrameID]ownerBox
	// fetches counts the Accessibility.getFullAXTree calls per frame
	// (tests and diagnostics); it outlives the frame's tree.
	fetches map[cdp.FrameID]int
}

func newAXCache() *axCache {
	return &axCache{trees: make(map[cdp.FrameID]*axTree), owners: make(map[cdp.FrameID]ownerBox),
		fetches: make(map[cdp.FrameID]int)}
}

// fetching counts one accessibility tree fetch of frame id.
func (c *axCache) fetching(id cdp.FrameID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.fetches) >= maxFetchCounts {
		clear(c.fetches)
	}
	c.fetches[id]++
}

// maxFetchCounts bounds the frames whose fetches axCache counts.
const maxFetchCounts = 1024

// fetchCount returns how many times frame id's tree was fetched.
func (c *axCache) fetchCount(id cdp.FrameID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches[id]
}

// ownerDelta returns the cached owner box offset of frame id, when it was
// read for the same owner element in the same parent document with the
// same signature (the signature covers the parent's attributes and layout
// boxes, so a restyled or moved owner misses).
func (c *axCache) ownerDelta(id cdp.FrameID, owner cdp.BackendNodeID, loader cdp.LoaderID, sig uint64) ([2]float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.owners[id]
	if !ok || b.owner != owner || b.loader != loader || b.sig != sig {
		return [2]float64{}, false
	}
	return b.delta, true
}

// storeOwnerDelta keeps the owner box offset of frame id.
func (c *axCache) storeOwnerDelta(id cdp.FrameID, b ownerBox) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.owners[id] = b
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
	for id := range c.owners {
		if present[id] == nil {
			delete(c.owners, id)
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
	clear(c.owners)
}
