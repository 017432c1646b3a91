package browser

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/cuahq/cua/internal/surface"
)

// Recorded CDP events, built as Chromium sends them, fed to a tracker
// without a browser.

func docRequest(loader cdp.LoaderID, method string) *network.EventRequestWillBeSent {
	return &network.EventRequestWillBeSent{
		LoaderID: loader, Type: network.ResourceTypeDocument,
		Request: &network.Request{Method: method},
	}
}

func navigated(id, parent cdp.FrameID, loader cdp.LoaderID, url string) *page.EventFrameNavigated {
	return &page.EventFrameNavigated{Frame: &cdp.Frame{ID: id, ParentID: parent, LoaderID: loader, URL: url}}
}

func docResponse(frame cdp.FrameID, loader cdp.LoaderID, status int64) *network.EventResponseReceived {
	return &network.EventResponseReceived{
		FrameID: frame, LoaderID: loader, Type: network.ResourceTypeDocument,
		Response: &network.Response{Status: status},
	}
}

type trackerFixture struct {
	t     *tracker
	page  *tsession
	oop   *tsession
	kills []error
}

func newTrackerFixture() *trackerFixture {
	fx := &trackerFixture{page: &tsession{id: "PAGE"}, oop: &tsession{id: "OOP", oopif: true}}
	fx.t = newTracker(fx.page, func(err error) { fx.kills = append(fx.kills, err) })
	fx.t.topFrame = "PAGE"
	return fx
}

// feed delivers events of target ts through the tracker's listener, as the
// target's read loop does.
func (fx *trackerFixture) feed(ts *tsession, evs ...any) {
	l := fx.t.listener(ts)
	for _, ev := range evs {
		l(ev)
	}
}

func TestTrackerPostBacked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		feed  func(fx *trackerFixture)
		want  bool
		top   string
		posts []cdp.FrameID
	}{
		{
			name: "form POST commits the top document",
			feed: func(fx *trackerFixture) {
				fx.feed(fx.page, docRequest("L1", "POST"), navigated("PAGE", "", "L1", "http://127.0.0.1/done"))
			},
			want: true, top: "http://127.0.0.1/done", posts: []cdp.FrameID{"PAGE"},
		},
		{
			name: "POST then 303 to GET is not POST-backed",
			feed: func(fx *trackerFixture) {
				fx.feed(fx.page, docRequest("L1", "POST"), docRequest("L1", "GET"),
					navigated("PAGE", "", "L1", "http://127.0.0.1/after"))
			},
			want: false, top: "http://127.0.0.1/after",
		},
		{
			name: "a child frame's POST makes the page POST-backed",
			feed: func(fx *trackerFixture) {
				fx.feed(fx.page, navigated("PAGE", "", "L0", "http://127.0.0.1/"),
					docRequest("L2", "POST"), navigated("CHILD", "PAGE", "L2", "http://127.0.0.1/frame"))
			},
			want: true, top: "http://127.0.0.1/", posts: []cdp.FrameID{"CHILD"},
		},
		{
			name: "a new top document clears every POST-backed frame",
			feed: func(fx *trackerFixture) {
				fx.feed(fx.page, docRequest("L2", "POST"), navigated("CHILD", "PAGE", "L2", "http://127.0.0.1/frame"),
					docRequest("L3", "GET"), navigated("PAGE", "", "L3", "http://127.0.0.1/next"))
			},
			want: false, top: "http://127.0.0.1/next",
		},
		{
			name: "a detached POST-backed frame no longer counts",
			feed: func(fx *trackerFixture) {
				fx.feed(fx.page, docRequest("L2", "POST"), navigated("CHILD", "PAGE", "L2", "http://127.0.0.1/frame"),
					&page.EventFrameDetached{FrameID: "CHILD"})
			},
			want: false, top: "about:blank",
		},
		{
			name: "an out-of-process frame's root is not the top frame",
			feed: func(fx *trackerFixture) {
				fx.feed(fx.oop, docRequest("L4", "POST"), navigated("OOP", "", "L4", "http://127.0.0.2/x"))
			},
			want: true, top: "about:blank", posts: []cdp.FrameID{"OOP"},
		},
		{
			name: "a same-document navigation changes only the URL",
			feed: func(fx *trackerFixture) {
				fx.feed(fx.page, docRequest("L1", "POST"), navigated("PAGE", "", "L1", "http://127.0.0.1/done"),
					&page.EventNavigatedWithinDocument{FrameID: "PAGE", URL: "http://127.0.0.1/done#tab"})
			},
			want: true, top: "http://127.0.0.1/done#tab", posts: []cdp.FrameID{"PAGE"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newTrackerFixture()
			tt.feed(fx)
			fx.t.mu.Lock()
			defer fx.t.mu.Unlock()
			if got := fx.t.postBacked(); got != tt.want {
				t.Errorf("postBacked = %v, want %v (post frames %v)", got, tt.want, fx.t.postFrames)
			}
			if fx.t.topURL != tt.top {
				t.Errorf("topURL = %q, want %q", fx.t.topURL, tt.top)
			}
			for _, f := range tt.posts {
				if !fx.t.postFrames[f] {
					t.Errorf("frame %s is not POST-backed; post frames %v", f, fx.t.postFrames)
				}
			}
			if len(fx.t.postFrames) != len(tt.posts) {
				t.Errorf("post frames = %v, want %v", fx.t.postFrames, tt.posts)
			}
			if len(fx.t.docMethod) != 0 {
				t.Errorf("loads in flight = %v after every load committed, want none", fx.t.docMethod)
			}
		})
	}
}

func TestTrackerChangeSequence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ev      any
		ts      func(fx *trackerFixture) *tsession
		changed bool
	}{
		{name: "DOM mutation", ev: &dom.EventChildNodeInserted{}, changed: true},
		{name: "frame navigated", ev: navigated("PAGE", "", "L1", "http://127.0.0.1/"), changed: true},
		{name: "DOMContentLoaded", ev: &page.EventLifecycleEvent{FrameID: "PAGE", Name: "DOMContentLoaded"}, changed: true},
		{name: "load", ev: &page.EventLifecycleEvent{FrameID: "PAGE", Name: "load"}, changed: true},
		{name: "other lifecycle event", ev: &page.EventLifecycleEvent{FrameID: "PAGE", Name: "firstPaint"}},
		{name: "frame attached", ev: &page.EventFrameAttached{FrameID: "C", ParentFrameID: "PAGE"}, changed: true},
		{name: "dialog opening", ev: &page.EventJavascriptDialogOpening{Type: page.DialogTypeAlert, Message: "hi"}, changed: true},
		{name: "started loading wakes but is no change", ev: &page.EventFrameStartedLoading{FrameID: "PAGE"}},
		{name: "stopped loading wakes but is no change", ev: &page.EventFrameStoppedLoading{FrameID: "PAGE"}},
		{name: "document request", ev: docRequest("L1", "GET")},
		{name: "document response", ev: docResponse("PAGE", "L1", 200)},
		{name: "binding of another name", ev: &runtime.EventBindingCalled{Name: "other"}},
		{name: "change observer binding", ev: &runtime.EventBindingCalled{Name: bindingName}, changed: true},
		{name: "page iframe attached", ev: &target.EventAttachedToTarget{SessionID: "S1",
			TargetInfo: &target.Info{TargetID: "OOP", Type: "iframe", ParentFrameID: "PAGE"}}, changed: true},
		{name: "worker attached", ev: &target.EventAttachedToTarget{SessionID: "S2",
			TargetInfo: &target.Info{TargetID: "W", Type: "worker"}}},
		{name: "unknown detach", ev: &target.EventDetachedFromTarget{SessionID: "S9"}},
		{name: "out-of-process frame crashed", ev: &inspector.EventTargetCrashed{},
			ts: func(fx *trackerFixture) *tsession { return fx.oop }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newTrackerFixture()
			ts := fx.page
			if tt.ts != nil {
				ts = tt.ts(fx)
			}
			fx.t.mu.Lock()
			seq := fx.t.observed(fx.t.changes)
			notify := fx.t.notify
			fx.t.mu.Unlock()
			if fx.t.changedSince(seq) {
				t.Fatal("changedSince is true before any event")
			}
			fx.feed(ts, tt.ev)
			if got := fx.t.changedSince(seq); got != tt.changed {
				t.Errorf("changedSince after %T = %v, want %v", tt.ev, got, tt.changed)
			}
			woke := false
			select {
			case <-notify:
				woke = true
			default:
			}
			if want := tt.changed || wakes(tt.ev); woke != want {
				t.Errorf("%T woke waiters = %v, want %v", tt.ev, woke, want)
			}
			// An observation not yet taken is remembered at the current
			// change count: nothing happened since.
			if fx.t.changedSince(seq + 5) {
				t.Errorf("changedSince(%d) of a future observation = true", seq+5)
			}
			if !fx.t.changedSince(0) {
				t.Error("changedSince(0) = false, want true (older than remembered)")
			}
		})
	}
}

// wakes reports whether ev wakes waiters without being a change.
func wakes(ev any) bool {
	switch ev.(type) {
	case *page.EventFrameStartedLoading, *page.EventFrameStoppedLoading:
		return true
	}
	return false
}

func TestTrackerObservationsAreForgotten(t *testing.T) {
	t.Parallel()
	fx := newTrackerFixture()
	fx.t.mu.Lock()
	first := fx.t.observed(fx.t.changes)
	for range maxObservations {
		fx.t.observed(fx.t.changes)
	}
	fx.t.mu.Unlock()
	if !fx.t.changedSince(first) {
		t.Errorf("changedSince(%d) of a forgotten observation = false, want true", first)
	}
	if fx.t.changedSince(first + maxObservations) {
		t.Error("changedSince of the last observation = true with no event")
	}
}

func TestTrackerSettle(t *testing.T) {
	t.Parallel()
	fx := newTrackerFixture()
	fx.t.mu.Lock()
	before := fx.t.evSeq
	fx.t.mu.Unlock()
	fx.feed(fx.page, &page.EventFrameRequestedNavigation{FrameID: "PAGE"}, &page.EventFrameStartedLoading{FrameID: "PAGE"})
	fx.t.mu.Lock()
	start, settled := fx.t.navStart["PAGE"], fx.t.settled["PAGE"]
	fx.t.mu.Unlock()
	if start <= before || settled >= start {
		t.Fatalf("after navigation start: navStart %d, settled %d, before %d; want navStart > before and unsettled", start, settled, before)
	}
	fx.feed(fx.page, docResponse("PAGE", "L1", 404), &page.EventLifecycleEvent{FrameID: "PAGE", Name: "DOMContentLoaded"})
	fx.t.mu.Lock()
	defer fx.t.mu.Unlock()
	if got := fx.t.settled["PAGE"]; got < start {
		t.Errorf("settled = %d after DOMContentLoaded, want >= navStart %d", got, start)
	}
	if st := fx.t.status["PAGE"]; st.status != 404 || st.loader != "L1" || st.seq == 0 {
		t.Errorf("status = %+v, want 404 of loader L1 with a sequence number", st)
	}
}

func TestTrackerOutOfProcessFrames(t *testing.T) {
	t.Parallel()
	fx := newTrackerFixture()
	attach := &target.EventAttachedToTarget{SessionID: "S1",
		TargetInfo: &target.Info{TargetID: "OOP", Type: "iframe", ParentFrameID: "PAGE"}}
	fx.feed(fx.page, attach)
	fx.t.mu.Lock()
	o := fx.t.oopifs["OOP"]
	fx.t.mu.Unlock()
	if o == nil || o.parent != "PAGE" || o.gone {
		t.Fatalf("after attach: oopif = %+v, want one under PAGE", o)
	}
	fx.feed(fx.page, attach) // attached again while alive: kept
	fx.t.mu.Lock()
	same := fx.t.oopifs["OOP"] == o
	fx.t.mu.Unlock()
	if !same {
		t.Error("a second attach of a live frame replaced it")
	}
	fx.feed(fx.page, &target.EventDetachedFromTarget{SessionID: "S1"})
	fx.t.mu.Lock()
	gone, sessions := o.gone, len(fx.t.sessions)
	fx.t.mu.Unlock()
	if !gone || sessions != 0 {
		t.Errorf("after detach: gone %v, sessions %d; want gone and none", gone, sessions)
	}
	fx.feed(fx.page, attach) // re-attached after it went: a new record
	fx.t.mu.Lock()
	o2 := fx.t.oopifs["OOP"]
	fx.t.mu.Unlock()
	if o2 == o || o2 == nil || o2.gone {
		t.Errorf("re-attach after detach: oopif %+v, want a fresh live one", o2)
	}
	if len(fx.kills) != 0 {
		t.Errorf("frame events killed the session: %v", fx.kills)
	}
}

func TestTrackerPageCrashKills(t *testing.T) {
	t.Parallel()
	for _, ev := range []any{&inspector.EventTargetCrashed{}, &inspector.EventDetached{Reason: "gone"}} {
		fx := newTrackerFixture()
		fx.feed(fx.oop, ev)
		if len(fx.kills) != 0 {
			t.Errorf("%T of an out-of-process frame killed the session", ev)
		}
		fx.feed(fx.page, ev)
		if len(fx.kills) != 1 || !errors.Is(fx.kills[0], surface.ErrCrashed) {
			t.Errorf("%T of the page: kills %v, want one wrapping ErrCrashed", ev, fx.kills)
		}
	}
}

func TestTrackerDialog(t *testing.T) {
	t.Parallel()
	fx := newTrackerFixture()
	fx.t.mu.Lock()
	nd := fx.t.noDialog
	fx.t.mu.Unlock()
	fx.feed(fx.page, &page.EventJavascriptDialogOpening{Type: page.DialogTypeConfirm, Message: "Sure?"})
	fx.t.mu.Lock()
	d := fx.t.dialog
	fx.t.mu.Unlock()
	if d == nil || d.typ != "confirm" || d.msg != "Sure?" || d.ts != fx.page {
		t.Fatalf("dialog = %+v, want the page's confirm", d)
	}
	if nd.Err() == nil {
		t.Error("the no-dialog context is live while a dialog is open")
	}
	fx.feed(fx.page, &page.EventJavascriptDialogClosed{Result: true})
	fx.t.mu.Lock()
	defer fx.t.mu.Unlock()
	if fx.t.dialog != nil || fx.t.noDialog.Err() != nil {
		t.Errorf("after close: dialog %+v, no-dialog err %v; want none and live", fx.t.dialog, fx.t.noDialog.Err())
	}
}

func TestTrackerWorlds(t *testing.T) {
	t.Parallel()
	fx := newTrackerFixture()
	aux, _ := json.Marshal(map[string]string{"frameId": "CHILD"})
	fx.feed(fx.page,
		&runtime.EventExecutionContextCreated{Context: &runtime.ExecutionContextDescription{ID: 7, Name: "main", AuxData: aux}},
		&runtime.EventExecutionContextCreated{Context: &runtime.ExecutionContextDescription{ID: 9, Name: worldName, AuxData: aux}})
	fx.t.mu.Lock()
	wk, ok := fx.t.frameCtx["CHILD"]
	gen := fx.t.frameGen["CHILD"]
	fx.t.mu.Unlock()
	if !ok || wk.id != 9 || wk.ts != fx.page {
		t.Fatalf("world of CHILD = %+v (%v), want context 9 of the page", wk, ok)
	}
	fx.feed(fx.page, &runtime.EventBindingCalled{Name: bindingName, ExecutionContextID: 9})
	fx.t.mu.Lock()
	if got := fx.t.frameGen["CHILD"]; got != gen+1 {
		t.Errorf("frame generation after the observer reported = %d, want %d", got, gen+1)
	}
	dgen := fx.t.domGen[fx.page]
	fx.t.mu.Unlock()
	fx.feed(fx.page, &runtime.EventBindingCalled{Name: bindingName, ExecutionContextID: 42})
	fx.feed(fx.oop, &runtime.EventExecutionContextsCleared{})
	fx.t.mu.Lock()
	if got := fx.t.domGen[fx.page]; got != dgen+1 {
		t.Errorf("DOM generation after a report from an unknown world = %d, want %d", got, dgen+1)
	}
	_, kept := fx.t.frameCtx["CHILD"]
	fx.t.mu.Unlock()
	if !kept {
		t.Error("clearing another target's contexts dropped the page's world")
	}
	fx.feed(fx.page, &runtime.EventExecutionContextsCleared{})
	fx.t.mu.Lock()
	defer fx.t.mu.Unlock()
	if len(fx.t.frameCtx) != 0 || len(fx.t.worlds) != 0 {
		t.Errorf("after the page's contexts cleared: worlds %v, frame contexts %v; want none", fx.t.worlds, fx.t.frameCtx)
	}
}
