package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// paintWatcher counts, in the isolated world of every document, each
// change that can alter what the document paints or where: DOM mutations,
// input, focus moves, scrolls, resizes, the pointer entering or leaving an
// element (hover styles), and animation and transition events; and
// __cuaPaint() reports the count and whether an animation or transition
// is running (a running one moves pixels with no event). The count is read
// by Runtime.evaluate in the document's own task queue, so a read is exact
// at its moment, unlike the change observer's reports, which travel as
// events and are throttled. The page cannot see or reset it.
const paintWatcher = `(() => {
  if (globalThis.__cuaPaint) return;
  let gen = 0;
  const bump = () => { gen++; };
  new MutationObserver(bump).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  for (const t of ['input', 'change', 'focusin', 'focusout', 'scroll', 'resize', 'pointerover', 'pointerout',
      'mouseover', 'mouseout', 'animationstart', 'animationiteration', 'animationend', 'animationcancel',
      'transitionrun', 'transitionstart', 'transitionend', 'transitioncancel', 'load', 'toggle', 'fullscreenchange']) {
    addEventListener(t, bump, true);
  }
  if (globalThis.visualViewport) {
    visualViewport.addEventListener('resize', bump);
    visualViewport.addEventListener('scroll', bump);
  }
  globalThis.__cuaPaint = () => {
    let moving = true;
    try { moving = document.getAnimations().some(a => a.pending || a.playState === 'running'); } catch (e) {}
    return {gen, moving};
  };
})()`

// errUnsteady says the page changed, or was animating, around a frame.
var errUnsteady = errors.New("the page did not hold still")

// paintGens numbers the paint states the screencast read, so a frame
// carries a small generation and Unchanged can compare the whole state.
type paintGens struct {
	mu     sync.Mutex
	n      uint64
	tokens map[uint64]string
}

// maxPaintGens is how many paint generations a session remembers.
const maxPaintGens = 16

func (p *paintGens) record(token string) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tokens == nil {
		p.tokens = make(map[uint64]string)
	}
	p.n++
	p.tokens[p.n] = token
	delete(p.tokens, p.n-maxPaintGens)
	return p.n
}

func (p *paintGens) lookup(gen uint64) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tokens[gen]
	return t, ok
}

// paintWorld is one document's isolated world to read.
type paintWorld struct {
	frame cdp.FrameID
	key   worldKey
}

// paintState reads the paint watcher of every document of the page and
// its out-of-process iframes: a token that differs from an earlier read's
// whenever any document changed what it paints since (the counts only
// grow, and a replaced document has a new world), and whether the page
// held still (no animation running, every frame's watcher read). Any
// frame it cannot read makes the page unsteady; an error reading the top
// document is returned.
func (s *Session) paintState(ctx context.Context) (string, bool, error) {
	if err := s.usable(); err != nil {
		return "", false, err
	}
	s.tr.mu.Lock()
	targets := []*tsession{s.page}
	for _, o := range s.tr.oopifs {
		if o.ts != nil && !o.gone {
			targets = append(targets, o.ts)
		}
	}
	worlds := make(map[cdp.FrameID]worldKey, len(s.tr.frameCtx))
	for f, k := range s.tr.frameCtx {
		worlds[f] = k
	}
	top := s.tr.topFrame
	s.tr.mu.Unlock()

	frames, err := s.paintFrames(ctx, targets)
	if err != nil {
		return "", false, err
	}
	live := make(map[*tsession]bool, len(targets))
	for _, ts := range targets {
		live[ts] = true
	}
	steady := true
	var read []paintWorld
	for _, f := range frames {
		k, ok := worlds[f]
		if !ok || !live[k.ts] {
			steady = false // a document whose changes nobody counts
			continue
		}
		read = append(read, paintWorld{frame: f, key: k})
	}
	if _, ok := worlds[top]; !ok {
		return "", false, errors.New("the page's paint watcher is not running")
	}
	parts := make([]string, len(read))
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		topErr error
	)
	for i, w := range read {
		wg.Go(func() {
			gen, moving, err := s.readPaint(ctx, w.key)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				steady = false
				if w.frame == top {
					topErr = err
				}
				parts[i] = string(w.frame) + ":gone"
				return
			}
			if moving {
				steady = false
			}
			parts[i] = string(w.frame) + ":" + strconv.FormatInt(int64(w.key.id), 10) + ":" + strconv.FormatUint(gen, 10)
		})
	}
	wg.Wait()
	if topErr != nil {
		return "", false, fmt.Errorf("paint state: %w", topErr)
	}
	slices.Sort(parts)
	return strings.Join(parts, ","), steady, nil
}

// paintFrames returns the id of every frame of targets, from their frame
// trees; the page's tree must answer.
func (s *Session) paintFrames(ctx context.Context, targets []*tsession) ([]cdp.FrameID, error) {
	trees := make([]*page.FrameTree, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, ts := range targets {
		wg.Go(func() {
			res, err := call(ctx, s, ts, page.GetFrameTree, cdp.Empty{})
			trees[i], errs[i] = res.FrameTree, err
		})
	}
	wg.Wait()
	if errs[0] != nil {
		return nil, fmt.Errorf("paint state: frame tree: %w", errs[0])
	}
	seen := make(map[cdp.FrameID]bool)
	var out []cdp.FrameID
	var walk func(t *page.FrameTree)
	walk = func(t *page.FrameTree) {
		if t == nil || t.Frame == nil {
			return
		}
		if !seen[t.Frame.ID] {
			seen[t.Frame.ID] = true
			out = append(out, t.Frame.ID)
		}
		for _, c := range t.ChildFrames {
			walk(c)
		}
	}
	for i, t := range trees {
		if errs[i] == nil {
			walk(t)
		}
	}
	return out, nil
}

// readPaint reads one document's paint watcher.
func (s *Session) readPaint(ctx context.Context, k worldKey) (uint64, bool, error) {
	res, err := call(ctx, s, k.ts, runtime.Evaluate, runtime.EvaluateParams{
		Expression: "globalThis.__cuaPaint()", ContextID: k.id, ReturnByValue: new(true), Silent: new(true),
	})
	if err != nil {
		return 0, false, err
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return 0, false, errors.New("the paint watcher did not answer")
	}
	var v struct {
		Gen    uint64 `json:"gen"`
		Moving bool   `json:"moving"`
	}
	if err := json.Unmarshal(res.Result.Value, &v); err != nil {
		return 0, false, fmt.Errorf("paint watcher: %w", err)
	}
	return v.Gen, v.Moving, nil
}

// Unchanged reports whether no document of the page changed what it
// paints since the paint generation gen was read and none is animating
// now (see surface.Screencaster). A generation the session no longer
// remembers, or any frame it cannot read, is a change.
func (s *Session) Unchanged(ctx context.Context, gen uint64) (bool, error) {
	want, ok := s.paint.lookup(gen)
	if !ok {
		return false, nil
	}
	got, steady, err := s.paintState(ctx)
	if err != nil {
		return false, err
	}
	return steady && got == want, nil
}
