package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/cuahq/cua/internal/surface"
)

// tracker follows the page from the CDP events of its targets: the top
// frame and URL, frame and DOM generations, the isolated worlds of the
// change observer, navigations in flight and settled, document statuses,
// POST-backed frames, the open JavaScript dialog, the out-of-process iframes
// the page auto-attached, and the sequence of change events and
// observations. It only records what events say; it never sends a command.
// Every method takes t.mu unless its doc says it is held.
type tracker struct {
	page *tsession
	// kill ends the session with a cause when the page target crashes or
	// detaches. It is called with t.mu held and must not take it.
	kill func(error)

	mu       sync.Mutex
	evSeq    uint64        // every tracked event
	changes  uint64        // change events (WaitChange)
	notify   chan struct{} // closed and replaced on every tracked event
	seq      uint64        // observations
	obs      map[uint64]uint64
	frameGen map[cdp.FrameID]uint64
	domGen   map[*tsession]uint64 // every DOM event of the target
	styleGen map[*tsession]uint64 // media-query changes of the target
	worlds   map[worldKey]cdp.FrameID
	frameCtx map[cdp.FrameID]worldKey // isolated world per frame
	status   map[cdp.FrameID]docStatus
	navStart map[cdp.FrameID]uint64
	settled  map[cdp.FrameID]uint64
	topFrame cdp.FrameID
	topURL   string
	// docMethod is the method of the last request of each top-frame
	// document load in flight (a redirect's GET replaces the POST);
	// postFrames holds the frames (the top one included) whose committed
	// document came from a POST: a reload of the top document makes
	// Chromium send each such frame's form again, so any one of them makes
	// the page POST-backed.
	docMethod  map[cdp.LoaderID]string
	postFrames map[cdp.FrameID]bool
	dialog     *dialogState
	noDialog   context.Context // canceled while a dialog is open
	dlgOpen    context.CancelFunc
	oopifs     map[target.ID]*oopif
	sessions   map[target.SessionID]target.ID // auto-attach sessions of iframes
}

// newTracker returns a tracker of the targets of page; kill is called (with
// t.mu held) when the page target crashes or detaches.
func newTracker(page *tsession, kill func(error)) *tracker {
	t := &tracker{
		page:       page,
		kill:       kill,
		notify:     make(chan struct{}),
		obs:        make(map[uint64]uint64),
		frameGen:   make(map[cdp.FrameID]uint64),
		domGen:     make(map[*tsession]uint64),
		styleGen:   make(map[*tsession]uint64),
		worlds:     make(map[worldKey]cdp.FrameID),
		frameCtx:   make(map[cdp.FrameID]worldKey),
		status:     make(map[cdp.FrameID]docStatus),
		navStart:   make(map[cdp.FrameID]uint64),
		settled:    make(map[cdp.FrameID]uint64),
		topURL:     "about:blank",
		docMethod:  make(map[cdp.LoaderID]string),
		postFrames: make(map[cdp.FrameID]bool),
		oopifs:     make(map[target.ID]*oopif),
		sessions:   make(map[target.SessionID]target.ID),
		noDialog:   context.Background(),
	}
	t.resetDialogCtx()
	return t
}

// listener returns the event handler of target ts. It runs on the target's
// read loop: it only updates state under t.mu.
func (t *tracker) listener(ts *tsession) func(ev any) {
	return func(ev any) {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.handle(ts, ev)
	}
}

// changedSince reports whether a change event arrived after the
// observation with sequence number since began. A since not yet observed
// is remembered with the current change count.
func (t *tracker) changedSince(since uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changedSinceLocked(since)
}

// changedSinceLocked is changedSince with t.mu held.
func (t *tracker) changedSinceLocked(since uint64) bool {
	base, ok := t.obs[since]
	if !ok {
		if since <= t.seq {
			return true
		}
		base = t.changes
		t.obs[since] = base
	}
	return t.changes > base
}

// observed records an observation that began at change count start and
// returns its sequence number. t.mu is held.
func (t *tracker) observed(start uint64) uint64 {
	t.seq++
	t.obs[t.seq] = start
	delete(t.obs, t.seq-maxObservations)
	return t.seq
}

// oopif is an out-of-process iframe target the page auto-attached.
type oopif struct {
	id     target.ID
	parent cdp.FrameID
	ts     *tsession // nil until attached
	gone   bool
	failed bool
	owner  cdp.BackendNodeID // owner <iframe> in the parent frame, once known
}

type worldKey struct {
	ts *tsession
	id runtime.ExecutionContextID
}

type dialogState struct {
	typ string
	msg string
	ts  *tsession
}

type docStatus struct {
	loader cdp.LoaderID
	status int
	seq    uint64
}

// handle updates the state from one event of target ts: each family handler
// takes the events it knows and reports whether it took ev. t.mu is held.
func (t *tracker) handle(ts *tsession, ev any) {
	_ = t.onNavigation(ts, ev) || t.onLoading(ev) || t.onDialog(ts, ev) ||
		t.onDOM(ts, ev) || t.onWorld(ts, ev) || t.onNetwork(ev) || t.onTarget(ts, ev)
}

// onNavigation tracks frame navigations, attachments and detachments: the
// top frame and URL, POST-backed frames and frame generations. t.mu is held.
func (t *tracker) onNavigation(ts *tsession, ev any) bool {
	switch e := ev.(type) {
	case *page.EventFrameNavigated:
		post := t.docMethod[e.Frame.LoaderID] == "POST"
		delete(t.docMethod, e.Frame.LoaderID)
		if e.Frame.ParentID == "" && !ts.oopif {
			t.topFrame = e.Frame.ID
			t.topURL = e.Frame.URL + e.Frame.URLFragment
			clear(t.postFrames)
		}
		if post {
			t.postFrames[e.Frame.ID] = true
		} else {
			delete(t.postFrames, e.Frame.ID)
		}
		t.frameGen[e.Frame.ID]++
		t.changed()
	case *page.EventNavigatedWithinDocument:
		if e.FrameID == t.topFrame {
			t.topURL = e.URL
		}
		t.frameGen[e.FrameID]++
		t.settled[e.FrameID] = t.evSeq + 1
		t.changed()
	case *page.EventFrameAttached:
		t.frameGen[e.ParentFrameID]++
		t.changed()
	case *page.EventFrameDetached:
		delete(t.postFrames, e.FrameID)
		t.settled[e.FrameID] = t.evSeq + 1
		t.changed()
	default:
		return false
	}
	return true
}

// onLoading tracks when frames start and stop loading (what settle waits
// for) and the page lifecycle. t.mu is held.
func (t *tracker) onLoading(ev any) bool {
	switch e := ev.(type) {
	case *page.EventFrameRequestedNavigation:
		t.navStart[e.FrameID] = t.evSeq + 1
		t.wake()
	case *page.EventFrameStartedNavigating:
		t.navStart[e.FrameID] = t.evSeq + 1
		t.wake()
	case *page.EventFrameStartedLoading:
		t.navStart[e.FrameID] = t.evSeq + 1
		t.wake()
	case *page.EventFrameStoppedLoading:
		t.settled[e.FrameID] = t.evSeq + 1
		t.wake()
	case *page.EventLifecycleEvent:
		switch e.Name {
		case "DOMContentLoaded":
			t.settled[e.FrameID] = t.evSeq + 1
			t.frameGen[e.FrameID]++
			t.changed()
		case "load":
			t.frameGen[e.FrameID]++
			t.changed()
		}
	case *page.EventDomContentEventFired, *page.EventLoadEventFired:
		t.changed()
	default:
		return false
	}
	return true
}

// onDialog tracks the JavaScript dialog that is open. t.mu is held.
func (t *tracker) onDialog(ts *tsession, ev any) bool {
	switch e := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		t.dialog = &dialogState{typ: string(e.Type), msg: e.Message, ts: ts}
		t.dlgOpen()
		t.changed()
	case *page.EventJavascriptDialogClosed:
		t.dialog = nil
		t.resetDialogCtx()
		t.changed()
	default:
		return false
	}
	return true
}

// onDOM counts the DOM changes of each target; a media-query change also
// counts in the target's style generation (a restyle of every frame of
// it that no mutation announces). t.mu is held.
func (t *tracker) onDOM(ts *tsession, ev any) bool {
	switch ev.(type) {
	case *css.EventMediaQueryResultChanged:
		t.styleGen[ts]++
		t.domGen[ts]++
		t.changed()
		return true
	case *dom.EventDocumentUpdated, *dom.EventChildNodeInserted, *dom.EventChildNodeRemoved,
		*dom.EventAttributeModified, *dom.EventAttributeRemoved, *dom.EventCharacterDataModified,
		*dom.EventChildNodeCountUpdated, *dom.EventShadowRootPushed, *dom.EventShadowRootPopped,
		*dom.EventPseudoElementAdded, *dom.EventPseudoElementRemoved:
		t.domGen[ts]++
		t.changed()
		return true
	}
	return false
}

// onWorld tracks the isolated worlds of the change observer and the changes
// it reports. t.mu is held.
func (t *tracker) onWorld(ts *tsession, ev any) bool {
	switch e := ev.(type) {
	case *runtime.EventExecutionContextCreated:
		if e.Context.Name != worldName || len(e.Context.AuxData) == 0 {
			return true
		}
		var aux struct {
			FrameID cdp.FrameID `json:"frameId"`
		}
		if json.Unmarshal(e.Context.AuxData, &aux) == nil && aux.FrameID != "" {
			k := worldKey{ts, e.Context.ID}
			t.worlds[k] = aux.FrameID
			t.frameCtx[aux.FrameID] = k
		}
	case *runtime.EventExecutionContextsCleared:
		for k, f := range t.worlds {
			if k.ts == ts {
				delete(t.worlds, k)
				if t.frameCtx[f] == k {
					delete(t.frameCtx, f)
				}
			}
		}
	case *runtime.EventBindingCalled:
		if e.Name != bindingName {
			return true
		}
		if f, ok := t.worlds[worldKey{ts, e.ExecutionContextID}]; ok {
			t.frameGen[f]++
		} else {
			t.domGen[ts]++
		}
		t.changed()
	default:
		return false
	}
	return true
}

// onNetwork tracks the method of each document load in flight and the
// HTTP status of each frame's document. t.mu is held.
func (t *tracker) onNetwork(ev any) bool {
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		// A document request of any frame of the page: its loader becomes
		// the new document't. A redirect is sent again under the same
		// loader with the redirect's method, so POST→303→GET ends as GET.
		if e.Type == network.ResourceTypeDocument && e.Request != nil && e.LoaderID != "" {
			if len(t.docMethod) >= 64 {
				clear(t.docMethod)
			}
			t.docMethod[e.LoaderID] = e.Request.Method
		}
	case *network.EventResponseReceived:
		if e.Type == network.ResourceTypeDocument && e.FrameID != "" && e.Response != nil {
			t.evSeq++
			t.status[e.FrameID] = docStatus{loader: e.LoaderID, status: int(e.Response.Status), seq: t.evSeq}
		}
	default:
		return false
	}
	return true
}

// onTarget tracks crashes and detachments of the page and the
// out-of-process iframes it auto-attaches. t.mu is held.
func (t *tracker) onTarget(ts *tsession, ev any) bool {
	switch e := ev.(type) {
	case *inspector.EventTargetCrashed:
		if ts == t.page {
			t.kill(fmt.Errorf("%w: renderer crashed", surface.ErrCrashed))
			t.wake()
		} else if o := t.oopifs[ts.id]; o != nil {
			o.gone = true // an out-of-process frame crashed: the page lives on
			t.changed()
		}
	case *inspector.EventDetached:
		if ts == t.page {
			t.kill(fmt.Errorf("%w: inspector detached: %s", surface.ErrCrashed, e.Reason))
			t.wake()
		}
	case *target.EventAttachedToTarget:
		if e.TargetInfo == nil || e.TargetInfo.Type != "iframe" {
			return true
		}
		t.sessions[e.SessionID] = e.TargetInfo.TargetID
		if o, ok := t.oopifs[e.TargetInfo.TargetID]; ok && !o.gone {
			return true
		}
		t.oopifs[e.TargetInfo.TargetID] = &oopif{id: e.TargetInfo.TargetID, parent: e.TargetInfo.ParentFrameID}
		t.changed()
	case *target.EventDetachedFromTarget:
		if id, ok := t.sessions[e.SessionID]; ok {
			delete(t.sessions, e.SessionID)
			if o := t.oopifs[id]; o != nil {
				o.gone = true
			}
			t.changed()
		}
	default:
		return false
	}
	return true
}

// changed records a change event. t.mu is held.
func (t *tracker) changed() {
	t.changes++
	t.wake()
}

// wake wakes every waiter. t.mu is held.
func (t *tracker) wake() {
	t.evSeq++
	close(t.notify)
	t.notify = make(chan struct{})
}

// resetDialogCtx makes a fresh "no dialog" context. t.mu is held (or the
// tracker is not shared yet).
func (t *tracker) resetDialogCtx() {
	if t.noDialog.Err() == nil && t.dlgOpen != nil {
		return
	}
	t.noDialog, t.dlgOpen = context.WithCancel(context.Background())
}

// postBacked reports whether any frame's document came from a POST. t.mu
// is held.
func (t *tracker) postBacked() bool { return len(t.postFrames) > 0 }
