package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/surface"
)

var _ surface.MaskedScreenshotter = (*Session)(nil)

// MaskedScreenshot returns a PNG of the page's visual viewport with every
// box filled with opaque black before the image is encoded (with no box,
// the capture is returned as Chromium encoded it). Boxes are in
// page coordinates, as a snapshot's node Bounds are (frame offsets
// included); the viewport's scroll position and the device pixel ratio are
// applied here. Each box is widened to whole pixels and clipped to the
// image; a box with a NaN or infinite coordinate blacks out the whole
// image (a sensitive node whose position is unknown could be anywhere).
//
// While a JavaScript dialog is open the renderer cannot paint: it returns
// an error wrapping surface.ErrNoFrame. It returns an error wrapping
// surface.ErrCrashed when the page is gone.
// Safe to call between the session's other methods, not concurrently with
// them.
func (s *Session) MaskedScreenshot(ctx context.Context, boxes []domain.Rect) ([]byte, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	// The viewport and the pixels are read at once: the caller keeps the
	// image only when nothing changed since its snapshot, so both describe
	// the same screen. A plain capture: a clip would make Chromium emulate
	// a viewport for it, which the page sees as a change (media queries
	// fire). Encoding for speed changes nothing the page sees.
	var (
		m      *page.GetLayoutMetricsResult
		mErr   error
		wg     sync.WaitGroup
		fast   = true
		params = page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: &fast}
	)
	wg.Go(func() {
		r, err := call(ctx, s, s.page, page.GetLayoutMetrics, cdp.Empty{})
		m, mErr = &r, err
	})
	res, err := call(ctx, s, s.page, page.CaptureScreenshot, params)
	wg.Wait()
	if errors.Is(mErr, errDialogOpen) || errors.Is(err, errDialogOpen) {
		return nil, fmt.Errorf("masked screenshot: %w while a JavaScript dialog is open", surface.ErrNoFrame)
	}
	if mErr != nil {
		return nil, fmt.Errorf("masked screenshot: layout metrics: %w", mErr)
	}
	vv := m.CSSVisualViewport
	if vv == nil || !(vv.ClientWidth > 0) || !(vv.ClientHeight > 0) {
		return nil, fmt.Errorf("masked screenshot: the page reports no viewport")
	}
	if err != nil {
		return nil, fmt.Errorf("masked screenshot: %w", err)
	}
	if len(boxes) == 0 {
		return res.Data, nil // nothing to paint: Chromium's PNG as it is
	}
	out, err := maskViewport(res.Data, boxes, vv)
	if err != nil {
		return nil, fmt.Errorf("masked screenshot: %w", err)
	}
	return out, nil
}

// maskViewport paints boxes (page coordinates) black on the PNG of the
// visual viewport vv and encodes the result (encodePNG). The image's
// pixels per CSS pixel come from its size against the viewport's; when
// width and height disagree (a scrollbar the viewport's client size
// leaves out), every box is painted under both, so the true one is
// covered. When no box touches the image (every one scrolled out of
// view), the PNG is returned as it is, never decoded.
func maskViewport(data []byte, boxes []domain.Rect, vv *page.VisualViewport) ([]byte, error) {
	bounds, err := pngBounds(data)
	if err != nil {
		return nil, err
	}
	sx, sy := float64(bounds.Dx())/vv.ClientWidth, float64(bounds.Dy())/vv.ClientHeight
	scales := []float64{sx}
	if math.Abs(sx-sy) > 0.005*sx {
		scales = append(scales, sy)
	}
	var rects []image.Rectangle
	for _, b := range boxes {
		for _, scale := range scales {
			if r, ok := pixelRect(b, vv.PageX, vv.PageY, scale, bounds); ok {
				rects = append(rects, r)
			}
		}
	}
	if len(rects) == 0 {
		return data, nil
	}
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if src.Bounds() != bounds {
		return nil, fmt.Errorf("decode: image is %v, its header said %v", src.Bounds(), bounds)
	}
	out, err := encodePNG(redact.Blacken(src, rects))
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return out, nil
}

// pixelRect converts a page box to the image pixels it touches, clipped to
// bounds; an unknown position is the whole image.
func pixelRect(b domain.Rect, pageX, pageY, scale float64, bounds image.Rectangle) (image.Rectangle, bool) {
	for _, f := range []float64{b.X, b.Y, b.W, b.H} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return bounds, true
		}
	}
	if b.Empty() {
		return image.Rectangle{}, false
	}
	clamp := func(f float64, hi int) int { return int(math.Max(0, math.Min(float64(hi), f))) }
	w, h := bounds.Dx(), bounds.Dy()
	x0, y0 := (b.X-pageX)*scale, (b.Y-pageY)*scale
	r := image.Rect(
		clamp(math.Floor(x0), w), clamp(math.Floor(y0), h),
		clamp(math.Ceil(x0+b.W*scale), w), clamp(math.Ceil(y0+b.H*scale), h),
	).Add(bounds.Min)
	return r, !r.Empty()
}

// MaskPNG is the Go part of MaskedScreenshot on its own: it paints boxes
// (page coordinates) black on data, a PNG of a visual viewport scrolled
// to (pageX, pageY) whose client size is width×height CSS pixels, and
// encodes the result as MaskedScreenshot does. The capture benchmark
// (bench/capture_bench_test.go) times it against the encoder it replaced.
func MaskPNG(data []byte, boxes []domain.Rect, pageX, pageY, width, height float64) ([]byte, error) {
	return maskViewport(data, boxes, &page.VisualViewport{PageX: pageX, PageY: pageY, ClientWidth: width, ClientHeight: height})
}
