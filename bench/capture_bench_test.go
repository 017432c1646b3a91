package bench

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/headlessexperimental"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/mockapp"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
	"github.com/cuahq/cua/internal/surface/browser"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// Capture benchmarks (issue 27 item 2): the ways to take a step's
// screenshot, side by side on MemberDesk's member page in real Chromium.
// Each reports ms per capture (ns/op), Chromium's CPU per capture
// (chromium-cpu-ms/op, from /proc) and the image's size (bytes/op).
// docs/explanation/capture.md has the numbers and what was kept.
//
//	a   Session.MaskedScreenshot, what a step's evidence takes: with one
//	    secret box (decode, paint, encode) and with none (Chromium's PNG as
//	    it is); go-mask/* is the Go part alone on the same capture, as it
//	    was before the fast encoder (image/png) and now (browser.MaskPNG)
//	b   HeadlessExperimental.beginFrame with a screenshot under
//	    --enable-begin-frame-control: CUA_HEADLESS_SHELL (default
//	    /usr/lib/chromium/chromium-headless-shell) when present; skipped
//	    with Chromium's own error otherwise
//	c   Page.captureScreenshot clipped to the viewport (a viewport the page
//	    sees emulated), against the plain capture in the same browser
//	d   JPEG and WebP at two qualities, in the same browser
//
// All are valid with -benchtime=1x.

// memberPage signs on and opens member 12345 in sess (the reference
// lookup, run once) and returns the box of its balance cell, the secret a
// mask covers.
func memberPage(b *testing.B, ctx context.Context, app *mockapp.Server, sess *browser.Session) []domain.Rect {
	b.Helper()
	lib, err := replay.LoadDir(examples)
	if err != nil {
		b.Fatal(err)
	}
	l, err := capability.Load(filepath.Join(examples, "memberdesk.savings_balance.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	sec := secrets{"corebank_operator": mockapp.DefaultOperator, "corebank_password": mockapp.DefaultPassword}
	rec, err := replay.Run(ctx, replay.Options{Capability: l, Library: lib, Inputs: map[string]string{"member_id": "12345"},
		BaseURL: app.URL(), Surface: sess, Secrets: sec, Redactor: redact.New(), RunID: "capture-bench"})
	if err != nil {
		b.Fatal(err)
	}
	if rec.Status != domain.StatusSuccess {
		b.Fatalf("lookup: %s %s %s", rec.Status, rec.FailureCode, rec.Message)
	}
	snap, err := sess.Observe(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for i, n := range snap.Nodes {
		if n.Name != "Savings Balance" {
			continue
		}
		for _, v := range snap.Nodes[i+1:] { // the value cell that follows
			if v.Name != "" && v.Name != n.Name && !v.Bounds.Empty() {
				return []domain.Rect{v.Bounds}
			}
		}
	}
	b.Fatalf("no savings balance on the member page:\n%s", surfacetest.Dump(snap))
	return nil
}

// timeCaptures runs capture b.N times and reports Chromium's CPU and the
// image size per capture.
func timeCaptures(b *testing.B, capture func() ([]byte, error)) {
	b.Helper()
	if _, err := capture(); err != nil { // warm
		b.Fatal(err)
	}
	size := 0
	cpu := childCPU()
	b.ResetTimer()
	for range b.N {
		out, err := capture()
		if err != nil {
			b.Fatal(err)
		}
		size += len(out)
	}
	b.StopTimer()
	b.ReportMetric(ms(childCPU()-cpu)/float64(b.N), "chromium-cpu-ms/op")
	b.ReportMetric(float64(size)/float64(b.N), "bytes/op")
}

// settle captures a few times untimed, so the first way timed in a
// browser is not charged with the work Chromium still does after the
// page loaded.
func settle(b *testing.B, capture func() error) {
	b.Helper()
	for range 10 {
		if err := capture(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCapture measures a, c and d (see the top of this file).
func BenchmarkCapture(b *testing.B) {
	if _, err := os.Stat(browser.DefaultExecPath); err != nil && os.Getenv("CUA_BROWSER") == "" {
		b.Skip("no Chromium")
	}
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := app.Open(); err != nil {
		b.Fatal(err)
	}
	defer app.Close()
	ctx := context.Background()
	br, err := browser.Launch(ctx, browser.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	sess, err := br.NewSession(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	boxes := memberPage(b, ctx, app, sess)
	settle(b, func() error { _, err := sess.MaskedScreenshot(ctx, nil); return err })
	b.Run("a/unmasked", func(b *testing.B) {
		timeCaptures(b, func() ([]byte, error) { return sess.MaskedScreenshot(ctx, nil) })
	})
	b.Run("a/masked", func(b *testing.B) {
		timeCaptures(b, func() ([]byte, error) { return sess.MaskedScreenshot(ctx, boxes) })
	})
	shot, err := sess.MaskedScreenshot(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("go-mask/image-png-before", func(b *testing.B) {
		for b.Loop() {
			if _, err := maskBefore(shot, boxes[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-mask/now", func(b *testing.B) {
		for b.Loop() { // the member page at rest: no scroll, one image pixel per CSS pixel
			if _, err := browser.MaskPNG(shot, boxes, 0, 0, float64(cfg.Width), float64(cfg.Height)); err != nil {
				b.Fatal(err)
			}
		}
	})
	tab := rawTab(b, ctx, app, browser.DefaultExecPath, nil, false)
	fast := true
	settle(b, func() error {
		_, err := cdp.Call(tab.ctx, tab.t, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
		return err
	})
	for _, v := range []struct {
		name string
		p    page.CaptureScreenshotParams
	}{
		{"c/png-plain", page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: &fast}},
		{"c/png-clip-viewport", page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: &fast,
			Clip: &page.Viewport{Width: tab.w, Height: tab.h, Scale: 1}}},
		{"d/jpeg-q80", page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatJpeg, Quality: new(int64(80)), OptimizeForSpeed: &fast}},
		{"d/jpeg-q50", page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatJpeg, Quality: new(int64(50)), OptimizeForSpeed: &fast}},
		{"d/webp-q80", page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatWebp, Quality: new(int64(80)), OptimizeForSpeed: &fast}},
		{"d/webp-q50", page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatWebp, Quality: new(int64(50)), OptimizeForSpeed: &fast}},
	} {
		b.Run(v.name, func(b *testing.B) {
			timeCaptures(b, func() ([]byte, error) {
				res, err := cdp.Call(tab.ctx, tab.t, page.CaptureScreenshot, v.p)
				return res.Data, err
			})
		})
	}
}

// maskBefore is what MaskedScreenshot's Go part did before the fast
// encoder: decode, paint the box black, encode with image/png at
// BestSpeed (scale 1, no scroll: the member page at rest).
func maskBefore(data []byte, box domain.Rect) ([]byte, error) {
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	img, ok := src.(draw.Image)
	if !ok {
		return nil, fmt.Errorf("decoded %T, not drawable", src)
	}
	r := image.Rect(int(box.X), int(box.Y), int(box.X+box.W)+1, int(box.Y+box.H)+1)
	draw.Draw(img, r, image.NewUniform(color.NRGBA{A: 0xff}), image.Point{}, draw.Src)
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	err = enc.Encode(&buf, img)
	return buf.Bytes(), err
}

// BenchmarkCaptureBeginFrame measures b (see the top of this file): a
// deterministic frame with its screenshot, in the headless shell started
// with the flags beginFrame requires, on the same MemberDesk page. Where
// only Chromium's new headless mode is installed it reports why it cannot
// run: the command does not exist there.
func BenchmarkCaptureBeginFrame(b *testing.B) {
	shell := cmpOr(os.Getenv("CUA_HEADLESS_SHELL"), "/usr/lib/chromium/chromium-headless-shell")
	app, err := mockapp.New(mockapp.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := app.Open(); err != nil {
		b.Fatal(err)
	}
	defer app.Close()
	ctx := context.Background()
	if _, err := os.Stat(shell); err != nil {
		if _, err := os.Stat(browser.DefaultExecPath); err != nil {
			b.Skip("no Chromium")
		}
		tab := rawTab(b, ctx, app, browser.DefaultExecPath, beginFrameFlags, true)
		_, err := cdp.Call(tab.ctx, tab.t, headlessexperimental.BeginFrame, headlessexperimental.BeginFrameParams{
			Screenshot: &headlessexperimental.ScreenshotParams{Format: headlessexperimental.ScreenshotParamsFormatPng}})
		b.Skipf("no headless shell at %s; %s (Chromium's new headless mode) answers beginFrame with: %v", shell, browser.DefaultExecPath, err)
	}
	tab := rawTab(b, ctx, app, shell, beginFrameFlags, true)
	params := headlessexperimental.BeginFrameParams{Screenshot: &headlessexperimental.ScreenshotParams{
		Format: headlessexperimental.ScreenshotParamsFormatPng, OptimizeForSpeed: true}}
	b.Run("b/beginframe-png", func(b *testing.B) {
		timeCaptures(b, func() ([]byte, error) {
			res, err := cdp.Call(tab.ctx, tab.t, headlessexperimental.BeginFrame, params)
			if err == nil && len(res.ScreenshotData) == 0 {
				err = fmt.Errorf("beginFrame returned no screenshot (damage %v)", res.HasDamage)
			}
			return res.ScreenshotData, err
		})
	})
}

// beginFrameFlags are what the headless shell needs for beginFrame
// (Chromium answers "Command is only supported with
// --run-all-compositor-stages-before-draw" without the second).
var beginFrameFlags = []string{
	"--enable-begin-frame-control", "--run-all-compositor-stages-before-draw",
	"--disable-new-content-rendering-timeout", "--disable-threaded-animation",
	"--disable-threaded-scrolling", "--disable-checker-imaging",
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// rawCDPTab is a chromedp page on MemberDesk's member page, outside cua's
// session, for the capture parameters a Session does not take.
type rawCDPTab struct {
	ctx  context.Context
	t    *chromedp.Target
	w, h float64 // the layout viewport, CSS pixels
}

// rawTab starts exec with cua's flags plus extra, opens a page (under
// begin-frame control when bfc), signs on and opens member 12345 by
// script, and returns the page. It ends with the benchmark.
func rawTab(b *testing.B, ctx context.Context, app *mockapp.Server, exec string, extra []string, bfc bool) rawCDPTab {
	b.Helper()
	tmp := b.TempDir()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(exec), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Headless, chromedp.UserDataDir(filepath.Join(tmp, "profile")), chromedp.Env("TMPDIR=" + tmp)}
	opts = append(opts, browser.FlagOptions(append(browser.Flags(), extra...))...)
	actx, cancel := chromedp.NewExecAllocator(ctx, opts...)
	b.Cleanup(cancel)
	bctx, bcancel := chromedp.NewContext(actx)
	b.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		b.Fatal(err)
	}
	created, err := cdp.Call(bctx, chromedp.FromContext(bctx).Browser, target.CreateTarget,
		target.CreateTargetParams{URL: "about:blank", EnableBeginFrameControl: &bfc})
	if err != nil {
		b.Fatal(err)
	}
	tctx, tcancel := chromedp.NewContext(bctx, chromedp.WithTargetID(created.TargetID))
	b.Cleanup(tcancel)
	if err := chromedp.Do(tctx); err != nil {
		b.Fatal(err)
	}
	tab := rawCDPTab{ctx: tctx, t: chromedp.FromContext(tctx).Target}
	stop := make(chan struct{})
	if bfc { // nothing loads or paints unless frames are begun
		go pumpFrames(tab, stop)
	}
	defer close(stop)
	if err := openMember(tab, app.URL()); err != nil {
		b.Fatalf("%s: %v", exec, err)
	}
	m, err := cdp.Call(tctx, tab.t, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		b.Fatal(err)
	}
	tab.w, tab.h = float64(m.CSSLayoutViewport.ClientWidth), float64(m.CSSLayoutViewport.ClientHeight)
	return tab
}

// pumpFrames begins a frame every 16 ms until stop is closed.
func pumpFrames(tab rawCDPTab, stop <-chan struct{}) {
	tick := time.NewTicker(16 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			_, _ = cdp.Call(tab.ctx, tab.t, headlessexperimental.BeginFrame, headlessexperimental.BeginFrameParams{})
		}
	}
}

// openMember signs on in the content frame by script and opens member
// 12345 there, waiting for each page by polling its heading.
func openMember(tab rawCDPTab, base string) error {
	content := `document.querySelector('iframe[name="content"]').contentDocument`
	steps := []struct{ js, want string }{
		{`location.href = ` + fmt.Sprintf("%q", base+"/") + `; true`, "operator"},
		{fmt.Sprintf(`(() => { const d = %s; d.querySelector('input[name="operator"]').value = %q;
			d.querySelector('input[name="password"]').value = %q; d.querySelector('form').submit(); return true })()`,
			content, mockapp.DefaultOperator, mockapp.DefaultPassword), "Welcome"},
		{`document.querySelector('iframe[name="content"]').src = ` + fmt.Sprintf("%q", base+"/content/member/12345") + `; true`, "Savings Balance"},
	}
	for _, st := range steps {
		if _, err := chromedp.Run(tab.ctx, chromedp.Evaluate[bool](st.js)); err != nil {
			return err
		}
		probe := fmt.Sprintf(`(() => { try { const d = %s; return d.documentElement.innerHTML } catch (e) { return '' } })()`, content)
		deadline := time.Now().Add(15 * time.Second)
		for {
			html, _ := chromedp.Run(tab.ctx, chromedp.Evaluate[string](probe))
			if strings.Contains(html, st.want) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("content frame never showed %q", st.want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}
