package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
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
// document through the binding as they happen (a MutationObserver already
// delivers one batch per task), so a change made before an observation is
// known before it: a report held back for later would arrive after the
// next snapshot and make every check of "changed since" after it true,
// forcing a needless retake of that step's evidence screenshot. Only a
// document that keeps changing (more than 20 reports in 100 ms) is
// throttled, to one report per 25 ms with the trailing edge kept; such a
// screen is unsteady anyway.
const changeObserver = `(() => {
  if (globalThis.__cuaObserving) return;
  globalThis.__cuaObserving = true;
  let start = 0, burst = 0, timer = 0;
  const send = () => { try { globalThis.` + bindingName + `(''); } catch (e) {} };
  const report = () => {
    if (timer) return;
    const now = performance.now();
    if (now - start > 100) { start = now; burst = 0; }
    if (++burst <= 20) { send(); return; }
    timer = setTimeout(() => { timer = 0; send(); }, 25);
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

	// tr follows the page from CDP events; ax caches accessibility trees.
	tr *tracker
	ax *axCache
	// paint numbers the paint states the screencast read (paintgen.go).
	paint paintGens

	// mu guards the fields below; a method that needs both takes mu
	// before tr.mu, never after.
	// dispatches numbers the dispatches; objs is the object group of the
	// one in progress (Dispatch is for one goroutine at a time).
	dispatches atomic.Uint64
	objs       objectGroups

	mu      sync.Mutex
	closed  bool
	frameTS map[cdp.FrameID]*tsession // host target of each frame, per last capture
	last    *domain.UiSnapshot
}

func newSession(ctx context.Context, b *Browser) (*Session, error) {
	s := &Session{
		b:       b,
		log:     b.log.With(slog.String("component", "browser.session")),
		timeout: b.opts.CallTimeout,
		frameTS: make(map[cdp.FrameID]*tsession),
		ax:      newAXCache(),
	}
	s.alive, s.killFn = context.WithCancelCause(context.Background())
	s.page = &tsession{}
	s.tr = newTracker(s.page, s.die)
	s.tabCtx, s.tabCancel = chromedp.NewContext(s.b.rootCtx,
		chromedp.WithNewBrowserContext(),
		chromedp.WithListener(s.tr.listener(s.page)))
	s.page.ctx, s.page.cancel = s.tabCtx, s.tabCancel
	if err := startTarget(ctx, s.tabCtx, s.tabCancel, 3*s.timeout); err != nil {
		return nil, fmt.Errorf("new session: %w", s.b.wrapLost(err))
	}
	s.page.t = chromedp.FromContext(s.tabCtx).Target
	s.page.id = s.page.t.TargetID
	s.tr.mu.Lock()
	if s.tr.topFrame == "" {
		s.tr.topFrame = cdp.FrameID(s.page.id) // a page's main frame has its target's id
	}
	s.tr.mu.Unlock()
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

// setupTarget installs the change observer and the paint watcher
// (paintgen.go) in an isolated world of every current and future document
// of ts.
func (s *Session) setupTarget(ctx context.Context, ts *tsession) error {
	if _, err := call(ctx, s, ts, runtime.AddBinding, runtime.AddBindingParams{Name: bindingName, ExecutionContextName: worldName}); err != nil {
		return err
	}
	if _, err := call(ctx, s, ts, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: changeObserver + ";\n" + paintWatcher, WorldName: worldName, RunImmediately: new(true),
	}); err != nil {
		return err
	}
	// Pages in background windows keep focus semantics.
	if _, err := call(ctx, s, ts, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		s.log.Debug("focus emulation", slog.String("error", err.Error()))
	}
	return nil
}

// kill marks the session dead with err (the first cause wins).
func (s *Session) kill(err error) {
	s.tr.mu.Lock()
	defer s.tr.mu.Unlock()
	s.die(err)
	s.tr.wake()
}

// die cancels the session's life with err and wakes no one; the tracker
// calls it with its lock held.
func (s *Session) die(err error) {
	if s.alive.Err() == nil {
		s.log.Warn("session lost", slog.String("error", err.Error()))
	}
	s.killFn(err)
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
	s.tr.mu.Lock()
	nd := s.tr.noDialog
	s.tr.mu.Unlock()
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
		s.tr.mu.Lock()
		if o := s.tr.oopifs[ts.id]; o != nil {
			o.gone = true
		}
		s.tr.mu.Unlock()
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
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return ErrClosed
		}
		s.tr.mu.Lock()
		changed, ch := s.tr.changedSinceLocked(since), s.tr.notify
		s.tr.mu.Unlock()
		if changed {
			return nil
		}
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
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return false, ErrClosed
	}
	return s.tr.changedSince(since), nil
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
		s.tr.mu.Lock()
		var frames []*tsession
		for _, o := range s.tr.oopifs {
			if o.ts != nil {
				frames = append(frames, o.ts)
			}
		}
		s.tr.mu.Unlock()
		s.mu.Unlock()
		s.killFn(ErrClosed)
		s.tr.mu.Lock()
		s.tr.wake()
		s.tr.mu.Unlock()
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
