package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/surface/browser"
)

// floorWay is the cheapest chromedp program that does the same page work
// as the lookup: Page.navigate and wait for load, a real mouse click at the
// known centre of the link, wait for the content frame's DOMContentLoaded,
// a click into the field and Input.insertText, a click on the button, wait
// again, and one Runtime.evaluate that reads the three cells. The centres
// are measured once, during the warm-up; nothing is looked up per lookup.
type floorWay struct {
	base        string
	tmp         string
	allocCancel context.CancelFunc
	tabCtx      context.Context
	tabCancel   context.CancelFunc

	mu     sync.Mutex
	names  map[cdp.FrameID]string // frame id → frame name
	urls   map[cdp.FrameID]string // frame id → URL of its document
	loaded chan string            // content frame DOMContentLoaded: the document's URL

	link, field, button point
	chrome              int // pid of its Chromium
}

type point struct{ X, Y float64 }

func newFloorWay(ctx context.Context, c *config, base string) (*floorWay, error) {
	tmp, err := os.MkdirTemp("", "cua-bench-floor-")
	if err != nil {
		return nil, err
	}
	opts := floorAllocOptions(c, tmp)
	w := &floorWay{base: base, tmp: tmp, names: map[cdp.FrameID]string{}, urls: map[cdp.FrameID]string{}, loaded: make(chan string, 64)}
	var actx context.Context
	actx, w.allocCancel = chromedp.NewExecAllocator(context.WithoutCancel(ctx), opts...)
	w.tabCtx, w.tabCancel = chromedp.NewContext(actx, chromedp.WithListener(w.listen))
	if err := chromedp.Do(w.tabCtx); err != nil {
		w.close()
		return nil, err
	}
	w.chrome = childWithTMPDIR(os.Getpid(), "cua-bench-floor-")
	if err := w.signOn(ctx); err != nil {
		w.close()
		return nil, fmt.Errorf("sign on: %w", err)
	}
	if err := w.calibrate(ctx); err != nil {
		w.close()
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	return w, nil
}

// floorAllocOptions starts Chromium as the floor does: cua's flags,
// headless, TMPDIR (and so the profile) under tmp.
func floorAllocOptions(c *config, tmp string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(c.execPath), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Headless, chromedp.Env("TMPDIR=" + tmp),
	}
	return append(opts, browser.FlagOptions(browser.Flags())...)
}

// listen runs on the tab's read loop: it only records.
func (w *floorWay) listen(ev any) {
	switch e := ev.(type) {
	case *page.EventFrameNavigated:
		w.mu.Lock()
		w.names[e.Frame.ID], w.urls[e.Frame.ID] = e.Frame.Name, e.Frame.URL
		w.mu.Unlock()
	case *page.EventLifecycleEvent:
		if e.Name != "DOMContentLoaded" {
			return
		}
		w.mu.Lock()
		name, url := w.names[e.FrameID], w.urls[e.FrameID]
		w.mu.Unlock()
		if name == "content" {
			select {
			case w.loaded <- url:
			default:
			}
		}
	}
}

func (w *floorWay) drain() {
	for {
		select {
		case <-w.loaded:
		default:
			return
		}
	}
}

// waitContent waits for the content frame to load a document whose URL
// contains path.
func (w *floorWay) waitContent(ctx context.Context, path string) error {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case u := <-w.loaded:
			if strings.Contains(u, path) {
				return nil
			}
		case <-t.C:
			return fmt.Errorf("content frame did not load %s", path)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// contentJS evaluates body with d bound to the content frame's document.
func contentJS(body string) string {
	return `(() => { const d = document.querySelector('iframe[name="content"]').contentDocument; ` + body + ` })()`
}

func (w *floorWay) signOn(ctx context.Context) error {
	w.drain()
	if err := chromedp.Do(w.tabCtx, chromedp.Navigate(w.base+"/")); err != nil {
		return err
	}
	w.drain()
	js := contentJS(fmt.Sprintf(`d.querySelector('input[name="operator"]').value = %q;
		d.querySelector('input[name="password"]').value = %q;
		d.querySelector('form').submit(); return true;`, mockapp.DefaultOperator, mockapp.DefaultPassword))
	if _, err := chromedp.Run(w.tabCtx, chromedp.Evaluate[bool](js)); err != nil {
		return err
	}
	return w.waitContent(ctx, "/content/home")
}

// centre returns the centre of the element sel in frame, in page
// coordinates.
func (w *floorWay) centre(frame, sel string) (point, error) {
	js := fmt.Sprintf(`(() => {
		const f = document.querySelector('iframe[name=%q]'), fr = f.getBoundingClientRect();
		const r = f.contentDocument.querySelector(%q).getBoundingClientRect();
		return {X: fr.left + f.clientLeft + r.left + r.width / 2, Y: fr.top + f.clientTop + r.top + r.height / 2};
	})()`, frame, sel)
	return chromedp.Run(w.tabCtx, chromedp.Evaluate[point](js))
}

// calibrate does one lookup measuring the centres on the way.
func (w *floorWay) calibrate(ctx context.Context) error {
	w.drain()
	if err := chromedp.Do(w.tabCtx, chromedp.Navigate(w.base+"/")); err != nil {
		return err
	}
	var err error
	if w.link, err = w.centre("nav", `a[href="/content/search"]`); err != nil {
		return err
	}
	w.drain()
	if err := chromedp.Do(w.tabCtx, chromedp.MouseClickXY(w.link.X, w.link.Y)); err != nil {
		return err
	}
	if err := w.waitContent(ctx, "/content/search"); err != nil {
		return err
	}
	if w.field, err = w.centre("content", `input[name="member"]`); err != nil {
		return err
	}
	if w.button, err = w.centre("content", `form[action="/content/search"] button[type="submit"]`); err != nil {
		return err
	}
	_, _, err = w.lookup(ctx)
	return err
}

func (w *floorWay) name() string { return "floor" }

func (w *floorWay) cpu() (uint64, uint64) { return selfTicks(), subtreeTicks(w.chrome) }

const floorRead = `const o = {heading: (d.querySelector('h1') || {}).textContent || ''};
	for (const td of d.querySelectorAll('td')) {
		const k = td.textContent.trim();
		if (k === 'Status' || k === 'Savings Balance' || k === 'As of') o[k] = td.nextElementSibling ? td.nextElementSibling.textContent : '';
	}
	return o;`

// floorTimeout bounds one lookup of the floor.
const floorTimeout = 60 * time.Second

func (w *floorWay) lookup(ctx context.Context) (time.Duration, outputs, error) {
	tctx, cancel := context.WithTimeout(w.tabCtx, floorTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	start := time.Now()
	w.drain()
	click := func(p point) error { return chromedp.Do(tctx, chromedp.MouseClickXY(p.X, p.Y)) }
	err := chromedp.Do(tctx, chromedp.Navigate(w.base+"/"))
	if err == nil {
		w.drain()
		err = click(w.link)
	}
	if err == nil {
		err = w.waitContent(tctx, "/content/search")
	}
	if err == nil {
		err = click(w.field)
	}
	if err == nil {
		_, err = chromedp.Call(tctx, input.InsertText, input.InsertTextParams{Text: member})
	}
	if err == nil {
		err = click(w.button)
	}
	if err == nil {
		err = w.waitContent(tctx, "/content/member/")
	}
	var got map[string]string
	if err == nil {
		got, err = chromedp.Run(tctx, chromedp.Evaluate[map[string]string](contentJS(floorRead)))
	}
	d := time.Since(start)
	if err != nil {
		return d, outputs{}, err
	}
	if got["heading"] != "Member Details" {
		return d, outputs{}, fmt.Errorf("heading %q, want Member Details", got["heading"])
	}
	out, err := canonical(got["Savings Balance"], got["Status"], got["As of"])
	return d, out, err
}

func (w *floorWay) close() {
	if w.tabCancel != nil {
		cctx, cancel := context.WithTimeout(w.tabCtx, 5*time.Second)
		_ = chromedp.Cancel(cctx)
		cancel()
		w.tabCancel()
	}
	if w.allocCancel != nil {
		w.allocCancel()
	}
	os.RemoveAll(w.tmp)
}
