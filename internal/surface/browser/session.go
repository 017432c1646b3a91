package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
)

var _ surface.Surface = (*Session)(nil)

// worldName names the isolated world the session runs its change observer
// and its DOM helpers in; the page cannot see or tamper with it.
const (
	worldName   = "__cua"
	bindingName = "__cuaChanged"
)

// changeObserver reports DOM mutations, input, change and focus moves of a
// document through the binding, at most once per 25 ms (leading and trailing
// edge).
const changeObserver = `(() => {
  if (globalThis.__cuaObserving) return;
  globalThis.__cuaObserving = true;
  let busy = false, dirty = false;
  const report = () => {
    if (busy) { dirty = true; return; }
    busy = true;
    try { globalThis.` + bindingName + `(''); } catch (e) {}
    setTimeout(() => { busy = false; if (dirty) { dirty = false; report(); } }, 25);
  };
  new MutationObserver(report).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  for (const t of ['input', 'change', 'focusin', 'focusout']) document.addEventListener(t, report, true);
})()`

// errDialogOpen is returned by a CDP call that a JavaScript dialog blocks.
var errDialogOpen = errors.New("a JavaScript dialog is open")

// maxObservations is how many observation sequence numbers WaitChange
// remembers.
const maxObservations = 256

// tsession is one attached CDP target: the page, or an out-of-process iframe.
type tsession struct {
	t      *chromedp.Target
	ctx    context.Context
	cancel context.CancelFunc
	id     target.ID
	oopif  bool
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

// Session is one isolated browser context with one page. It implements
// surface.Surface: methods are for one goroutine at a time, except Close,
// which is safe to call concurrently and more than once.
type Session struct {
	b       *Browser
	log     *slog.Logger
	timeout time.Duration

	tabCtx    context.Context
	tabCancel context.CancelFunc
	page      *tsession

	alive     context.Context // canceled with the cause when the session dies
	killFn    context.CancelCauseFunc
	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex
	closed   bool
	evSeq    uint64        // every tracked event
	changes  uint64        // change events (WaitChange)
	notify   chan struct{} // closed and replaced on every tracked event
	seq      uint64        // observations
	obs      map[uint64]uint64
	frameGen map[cdp.FrameID]uint64
	domGen   map[*tsession]uint64
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
	frameTS    map[cdp.FrameID]*tsession      // host target of each frame, per last capture
	cache      map[cdp.FrameID]*axCache
	last       *domain.UiSnapshot
}

func newSession(ctx context.Context, b *Browser) (*Session, error) {
	s := &Session{
		b:        b,
		log:      b.log.With(slog.String("component", "browser.session")),
		timeout:  b.opts.CallTimeout,
		notify:   make(chan struct{}),
		obs:      make(map[uint64]uint64),
		frameGen: make(map[cdp.FrameID]uint64),
		domGen:   make(map[*tsession]uint64),
		worlds:   make(map[worldKey]cdp.FrameID),
		frameCtx: make(map[cdp.FrameID]worldKey),
		status:   make(map[cdp.FrameID]docStatus),
		navStart: make(map[cdp.FrameID]uint64),
		settled:  make(map[cdp.FrameID]uint64),
		oopifs:   make(map[target.ID]*oopif),
		sessions: make(map[target.SessionID]target.ID),
		frameTS:  make(map[cdp.FrameID]*tsession),
		cache:    make(map[cdp.FrameID]*axCache),
		topURL:   "about:blank",

		docMethod:  make(map[cdp.LoaderID]string),
		postFrames: make(map[cdp.FrameID]bool),
	}
	s.alive, s.killFn = context.WithCancelCause(context.Background())
	s.noDialog = context.Background()
	s.resetDialogCtx()

	s.page = &tsession{}
	s.tabCtx, s.tabCancel = chromedp.NewContext(s.b.rootCtx,
		chromedp.WithNewBrowserContext(),
		chromedp.WithListener(s.listener(s.page)))
	s.page.ctx, s.page.cancel = s.tabCtx, s.tabCancel
	if err := startTarget(ctx, s.tabCtx, s.tabCancel, 3*s.timeout); err != nil {
		return nil, fmt.Errorf("new session: %w", s.b.wrapLost(err))
	}
	s.page.t = chromedp.FromContext(s.tabCtx).Target
	s.page.id = s.page.t.TargetID
	s.mu.Lock()
	if s.topFrame == "" {
		s.topFrame = cdp.FrameID(s.page.id) // a page's main frame has its target's id
	}
	s.mu.Unlock()
	if err := s.setupTarget(ctx, s.page); err != nil {
		s.Close()
		return nil, fmt.Errorf("new session: %w", err)
	}
	if ch, err := chromedp.Detached(s.tabCtx); err == nil {
		go func() {
			select {
			case <-ch:
				s.kill(fmt.Errorf("%w: page target detached", surface.ErrCrashed))
			case <-s.alive.Done():
			}
		}()
	}
	return s, nil
}

// startTarget runs the first action on a chromedp context, which attaches
// its target and binds the target's event loop to cctx itself; the wait is
// bounded by ctx and timeout.
func startTarget(ctx, cctx context.Context, cancel context.CancelFunc, timeout time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(cctx) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-errc:
		if err != nil {
			cancel()
		}
		return err
	case <-timer.C:
		cancel()
		<-errc
		return fmt.Errorf("attach target: no answer within %s", timeout)
	case <-ctx.Done():
		cancel()
		<-errc
		return ctx.Err()
	}
}

// setupTarget installs the change observer in an isolated world of every
// current and future document of ts.
func (s *Session) setupTarget(ctx context.Context, ts *tsession) error {
	if _, err := call(ctx, s, ts, runtime.AddBinding, runtime.AddBindingParams{Name: bindingName, ExecutionContextName: worldName}); err != nil {
		return err
	}
	if _, err := call(ctx, s, ts, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: changeObserver, WorldName: worldName, RunImmediately: new(true),
	}); err != nil {
		return err
	}
	// Pages in background windows keep focus semantics.
	if _, err := call(ctx, s, ts, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		s.log.Debug("focus emulation", slog.String("error", err.Error()))
	}
	return nil
}

// listener returns the event handler of one target. It runs on the target's
// read loop: it only updates state under s.mu.
func (s *Session) listener(ts *tsession) func(ev any) {
	return func(ev any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.handle(ts, ev)
	}
}

// handle updates the session state from one event: each family handler
// takes the events it knows and reports whether it took ev. s.mu is held.
func (s *Session) handle(ts *tsession, ev any) {
	_ = s.onNavigation(ts, ev) || s.onLoading(ev) || s.onDialog(ts, ev) ||
		s.onDOM(ts, ev) || s.onWorld(ts, ev) || s.onNetwork(ev) || s.onTarget(ts, ev)
}

// onNavigation tracks frame navigations, attachments and detachments: the
// top frame and URL, POST-backed frames and frame generations. s.mu is held.
func (s *Session) onNavigation(ts *tsession, ev any) bool {
	switch e := ev.(type) {
	case *page.EventFrameNavigated:
		post := s.docMethod[e.Frame.LoaderID] == "POST"
		delete(s.docMethod, e.Frame.LoaderID)
		if e.Frame.ParentID == "" && !ts.oopif {
			s.topFrame = e.Frame.ID
			s.topURL = e.Frame.URL + e.Frame.URLFragment
			clear(s.postFrames)
		}
		if post {
			s.postFrames[e.Frame.ID] = true
		} else {
			delete(s.postFrames, e.Frame.ID)
		}
		s.frameGen[e.Frame.ID]++
		s.changed()
	case *page.EventNavigatedWithinDocument:
		if e.FrameID == s.topFrame {
			s.topURL = e.URL
		}
		s.frameGen[e.FrameID]++
		s.settled[e.FrameID] = s.evSeq + 1
		s.changed()
	case *page.EventFrameAttached:
		s.frameGen[e.ParentFrameID]++
		s.changed()
	case *page.EventFrameDetached:
		delete(s.postFrames, e.FrameID)
		s.settled[e.FrameID] = s.evSeq + 1
		s.changed()
	default:
		return false
	}
	return true
}

// onLoading tracks when frames start and stop loading (what settle waits
// for) and the page lifecycle. s.mu is held.
func (s *Session) onLoading(ev any) bool {
	switch e := ev.(type) {
	case *page.EventFrameRequestedNavigation:
		s.navStart[e.FrameID] = s.evSeq + 1
		s.wake()
	case *page.EventFrameStartedNavigating:
		s.navStart[e.FrameID] = s.evSeq + 1
		s.wake()
	case *page.EventFrameStartedLoading:
		s.navStart[e.FrameID] = s.evSeq + 1
		s.wake()
	case *page.EventFrameStoppedLoading:
		s.settled[e.FrameID] = s.evSeq + 1
		s.wake()
	case *page.EventLifecycleEvent:
		switch e.Name {
		case "DOMContentLoaded":
			s.settled[e.FrameID] = s.evSeq + 1
			s.frameGen[e.FrameID]++
			s.changed()
		case "load":
			s.frameGen[e.FrameID]++
			s.changed()
		}
	case *page.EventDomContentEventFired, *page.EventLoadEventFired:
		s.changed()
	default:
		return false
	}
	return true
}

// onDialog tracks the JavaScript dialog that is open. s.mu is held.
func (s *Session) onDialog(ts *tsession, ev any) bool {
	switch e := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		s.dialog = &dialogState{typ: string(e.Type), msg: e.Message, ts: ts}
		s.dlgOpen()
		s.changed()
	case *page.EventJavascriptDialogClosed:
		s.dialog = nil
		s.resetDialogCtx()
		s.changed()
	default:
		return false
	}
	return true
}

// onDOM counts the DOM changes of each target. s.mu is held.
func (s *Session) onDOM(ts *tsession, ev any) bool {
	switch ev.(type) {
	case *dom.EventDocumentUpdated, *dom.EventChildNodeInserted, *dom.EventChildNodeRemoved,
		*dom.EventAttributeModified, *dom.EventAttributeRemoved, *dom.EventCharacterDataModified,
		*dom.EventChildNodeCountUpdated, *dom.EventShadowRootPushed, *dom.EventShadowRootPopped,
		*dom.EventPseudoElementAdded, *dom.EventPseudoElementRemoved, *css.EventMediaQueryResultChanged:
		s.domGen[ts]++
		s.changed()
		return true
	}
	return false
}

// onWorld tracks the isolated worlds of the change observer and the changes
// it reports. s.mu is held.
func (s *Session) onWorld(ts *tsession, ev any) bool {
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
			s.worlds[k] = aux.FrameID
			s.frameCtx[aux.FrameID] = k
		}
	case *runtime.EventExecutionContextsCleared:
		for k, f := range s.worlds {
			if k.ts == ts {
				delete(s.worlds, k)
				if s.frameCtx[f] == k {
					delete(s.frameCtx, f)
				}
			}
		}
	case *runtime.EventBindingCalled:
		if e.Name != bindingName {
			return true
		}
		if f, ok := s.worlds[worldKey{ts, e.ExecutionContextID}]; ok {
			s.frameGen[f]++
		} else {
			s.domGen[ts]++
		}
		s.changed()
	default:
		return false
	}
	return true
}

// onNetwork tracks the method of each document load in flight and the
// HTTP status of each frame's document. s.mu is held.
func (s *Session) onNetwork(ev any) bool {
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		// A document request of any frame of the page: its loader becomes
		// the new document's. A redirect is sent again under the same
		// loader with the redirect's method, so POST→303→GET ends as GET.
		if e.Type == network.ResourceTypeDocument && e.Request != nil && e.LoaderID != "" {
			if len(s.docMethod) >= 64 {
				clear(s.docMethod)
			}
			s.docMethod[e.LoaderID] = e.Request.Method
		}
	case *network.EventResponseReceived:
		if e.Type == network.ResourceTypeDocument && e.FrameID != "" && e.Response != nil {
			s.evSeq++
			s.status[e.FrameID] = docStatus{loader: e.LoaderID, status: int(e.Response.Status), seq: s.evSeq}
		}
	default:
		return false
	}
	return true
}

// onTarget tracks crashes and detachments of the page and the
// out-of-process iframes it auto-attaches. s.mu is held.
func (s *Session) onTarget(ts *tsession, ev any) bool {
	switch e := ev.(type) {
	case *inspector.EventTargetCrashed:
		if ts == s.page {
			s.killLocked(fmt.Errorf("%w: renderer crashed", surface.ErrCrashed))
		} else if o := s.oopifs[ts.id]; o != nil {
			o.gone = true // an out-of-process frame crashed: the page lives on
			s.changed()
		}
	case *inspector.EventDetached:
		if ts == s.page {
			s.killLocked(fmt.Errorf("%w: inspector detached: %s", surface.ErrCrashed, e.Reason))
		}
	case *target.EventAttachedToTarget:
		if e.TargetInfo == nil || e.TargetInfo.Type != "iframe" {
			return true
		}
		s.sessions[e.SessionID] = e.TargetInfo.TargetID
		if o, ok := s.oopifs[e.TargetInfo.TargetID]; ok && !o.gone {
			return true
		}
		s.oopifs[e.TargetInfo.TargetID] = &oopif{id: e.TargetInfo.TargetID, parent: e.TargetInfo.ParentFrameID}
		s.changed()
	case *target.EventDetachedFromTarget:
		if id, ok := s.sessions[e.SessionID]; ok {
			delete(s.sessions, e.SessionID)
			if o := s.oopifs[id]; o != nil {
				o.gone = true
			}
			s.changed()
		}
	default:
		return false
	}
	return true
}

// changed records a change event. s.mu is held.
func (s *Session) changed() {
	s.changes++
	s.wake()
}

// wake wakes every waiter. s.mu is held.
func (s *Session) wake() {
	s.evSeq++
	close(s.notify)
	s.notify = make(chan struct{})
}

// resetDialogCtx makes a fresh "no dialog" context. s.mu is held (or the
// session is not shared yet).
func (s *Session) resetDialogCtx() {
	if s.noDialog.Err() == nil && s.dlgOpen != nil {
		return
	}
	s.noDialog, s.dlgOpen = context.WithCancel(context.Background())
}

// kill marks the session dead with err (the first cause wins).
func (s *Session) kill(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked(err)
}

func (s *Session) killLocked(err error) {
	if s.alive.Err() == nil {
		s.log.Warn("session lost", slog.String("error", err.Error()))
	}
	s.killFn(err)
	s.wake()
}

// usable returns why the session cannot be used, or nil.
func (s *Session) usable() error {
	if s.alive.Err() != nil {
		return context.Cause(s.alive)
	}
	return s.b.lostErr()
}

func (b *Browser) wrapLost(err error) error {
	if lerr := b.lostErr(); lerr != nil {
		return fmt.Errorf("%w (%v)", lerr, err)
	}
	return err
}

// callOpt changes how call treats a dialog.
type callOpt int

const (
	// abortOnDialog makes a call fail with errDialogOpen when a JavaScript
	// dialog is or becomes open (the renderer would not answer).
	abortOnDialog callOpt = iota
	// ignoreDialog is for the calls a dialog does not block.
	ignoreDialog
)

// call runs one CDP command on ts with the session's deadline. It returns
// at once with an error wrapping surface.ErrCrashed when the session dies,
// and with errDialogOpen when a dialog blocks the renderer.
func call[P, R any](ctx context.Context, s *Session, ts *tsession, cmd cdp.Command[P, R], params P, opts ...callOpt) (R, error) {
	var zero R
	if err := s.usable(); err != nil {
		return zero, err
	}
	opt := abortOnDialog
	if len(opts) > 0 {
		opt = opts[0]
	}
	s.mu.Lock()
	nd := s.noDialog
	s.mu.Unlock()
	if opt == abortOnDialog && nd.Err() != nil {
		return zero, fmt.Errorf("%s: %w", cmd.Method, errDialogOpen)
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	stopAlive := context.AfterFunc(s.alive, cancel)
	defer stopAlive()
	if opt == abortOnDialog {
		stopDialog := context.AfterFunc(nd, cancel)
		defer stopDialog()
	}
	res, err := cdp.Call(cctx, ts.t, cmd, params)
	if err == nil {
		return res, nil
	}
	return zero, s.callErr(ctx, ts, cmd.Method, nd, opt, err)
}

// callErr classifies the error of a CDP call.
func (s *Session) callErr(ctx context.Context, ts *tsession, method string, nd context.Context, opt callOpt, err error) error {
	if uerr := s.usable(); uerr != nil {
		return uerr
	}
	if errors.Is(err, chromedp.ErrTargetDetached) || ts.ctx.Err() != nil {
		if ts == s.page {
			s.kill(fmt.Errorf("%w: page target detached", surface.ErrCrashed))
			return s.usable()
		}
		s.mu.Lock()
		if o := s.oopifs[ts.id]; o != nil {
			o.gone = true
		}
		s.mu.Unlock()
		return fmt.Errorf("%s: frame target gone: %w", method, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	if opt == abortOnDialog && nd.Err() != nil {
		return fmt.Errorf("%s: %w", method, errDialogOpen)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %s: %w", method, s.timeout, err)
	}
	return fmt.Errorf("%s: %w", method, err)
}

// WaitChange blocks until a change event (navigation, load, DOM or
// accessibility-relevant mutation, input, focus move, dialog) arrived after
// the observation with sequence number since began. It returns nil at once
// when one is already pending (or since is older than the session
// remembers), ctx.Err() when ctx ends first, and an error wrapping
// surface.ErrCrashed when the session dies.
func (s *Session) WaitChange(ctx context.Context, since uint64) error {
	for {
		if err := s.usable(); err != nil {
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		if s.changedSinceLocked(since) {
			s.mu.Unlock()
			return nil
		}
		ch := s.notify
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.alive.Done():
		case <-s.b.lost:
		}
	}
}

// ChangedSince reports without waiting whether a change event arrived after
// the observation with sequence number since began: true exactly when
// WaitChange(since) would return nil at once. It returns an error wrapping
// surface.ErrCrashed when the session died, ErrClosed after Close.
func (s *Session) ChangedSince(_ context.Context, since uint64) (bool, error) {
	if err := s.usable(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, ErrClosed
	}
	return s.changedSinceLocked(since), nil
}

// changedSinceLocked is ChangedSince's answer; s.mu is held. A since not yet
// observed is remembered with the current change count.
func (s *Session) changedSinceLocked(since uint64) bool {
	base, ok := s.obs[since]
	if !ok {
		if since <= s.seq {
			return true
		}
		base = s.changes
		s.obs[since] = base
	}
	return s.changes > base
}

// Screenshot returns a PNG of the page's viewport. It fails while a
// JavaScript dialog is open (the renderer cannot paint).
func (s *Session) Screenshot(ctx context.Context) ([]byte, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	res, err := call(ctx, s, s.page, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return res.Data, nil
}

// Close closes the page and disposes of its browser context, bounded by a
// timeout. It is idempotent and safe for concurrent use; every other method
// returns ErrClosed afterwards.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		wasAlive := s.alive.Err() == nil && s.b.lostErr() == nil
		s.mu.Lock()
		s.closed = true
		var frames []*tsession
		for _, o := range s.oopifs {
			if o.ts != nil {
				frames = append(frames, o.ts)
			}
		}
		s.mu.Unlock()
		s.killFn(ErrClosed)
		s.mu.Lock()
		s.wake()
		s.mu.Unlock()
		for _, ts := range frames {
			ts.cancel()
		}
		done := make(chan error, 1)
		go func() { done <- chromedp.Cancel(s.tabCtx) }()
		timer := time.NewTimer(closeTimeout)
		defer timer.Stop()
		select {
		case err := <-done:
			if err != nil && wasAlive && !errors.Is(err, context.Canceled) {
				s.closeErr = fmt.Errorf("close session: %w", err)
			}
		case <-timer.C:
			s.closeErr = fmt.Errorf("close session: no answer within %s", closeTimeout)
		}
		s.b.forget(s)
	})
	return s.closeErr
}

// postBacked reports whether any frame's document came from a POST. s.mu
// is held.
func (s *Session) postBacked() bool { return len(s.postFrames) > 0 }
