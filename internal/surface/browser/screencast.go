package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/surface"
)

var _ surface.Screencaster = (*Session)(nil)

// castRetry is how soon the screencast tries again after a frame it could
// not send or the consumer dropped, when the page paints nothing new.
const castRetry = 150 * time.Millisecond

// Screencast streams the page's frames to each until ctx ends or each
// returns an error other than surface.ErrFrameStale. Chromium's own
// screencast (Page.startScreencast, a small JPEG it is never shown) only
// says when the page painted; each frame sent is a fresh capture taken
// between two reads of the paint watcher (paintgen.go) that agree and
// report no animation, so it shows the page in the state its Gen names.
// A frame the page changed under is not sent; after one, or after each
// returns surface.ErrFrameStale, the cast tries again every castRetry
// until a frame goes through, so a page that settles is shown settled. A
// page that never holds still (a running animation, a script that changes
// the DOM every frame) gets no frame: the price of never sending pixels no
// snapshot describes. Every frame event is acknowledged after each
// returns, so a slow consumer slows the cast. It may run beside the
// session's other methods: it only reads.
func (s *Session) Screencast(ctx context.Context, each func(surface.Frame) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	// The subscription lives on the tab's chromedp context, ended by ctx,
	// or by the session's death.
	cctx, cancel := context.WithCancel(s.page.ctx)
	defer cancel()
	stopCtx := context.AfterFunc(ctx, cancel)
	defer stopCtx()
	stop := context.AfterFunc(s.alive, cancel)
	defer stop()
	events, errc := pumpFrames(cctx)
	quality, side := int64(10), int64(64)
	if _, err := cdp.Call(cctx, s.page.t, page.StartScreencast, page.StartScreencastParams{Format: page.StartScreencastFormatJpeg,
		Quality: &quality, MaxWidth: side, MaxHeight: side, EveryNthFrame: 1, MaxFramesInFlight: 1}); err != nil {
		return fmt.Errorf("screencast: %w", err)
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer scancel()
		_, _ = cdp.Call(sctx, s.page.t, page.StopScreencast, cdp.Empty{})
	}()
	retry := time.NewTimer(0) // the first frame, whatever Chromium sends
	defer retry.Stop()
	for {
		var (
			ack     int64 // the frame event to acknowledge
			pending bool
		)
		select {
		case ev := <-events:
			ack, pending = ev.SessionID, true
		case err := <-errc:
			if cctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("screencast: %w", err)
		case <-retry.C:
		case <-cctx.Done():
			if err := s.usable(); err != nil && ctx.Err() == nil {
				return err
			}
			return ctx.Err()
		}
		sent, err := s.castOne(cctx, each)
		if err != nil {
			return err
		}
		if sent {
			retry.Stop()
		} else {
			retry.Reset(castRetry)
		}
		if pending {
			if _, err := cdp.Call(cctx, s.page.t, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: ack}); err != nil {
				if cctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("screencast ack: %w", err)
			}
		}
	}
}

// pumpFrames delivers Chromium's screencast frame events one at a time on
// a channel, and the iterator's error on another, until ctx ends.
func pumpFrames(ctx context.Context) (<-chan page.EventScreencastFrame, <-chan error) {
	events := make(chan page.EventScreencastFrame)
	errc := make(chan error, 1)
	go func() {
		for ev, err := range chromedp.Events(ctx, page.ScreencastFrame) {
			if err != nil {
				errc <- err
				return
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return events, errc
}

// castOne captures one frame and hands it to each. It reports whether
// each took it; an error ends the cast (each's own, or the session's
// death). A frame it cannot capture, or that the page changed under, is
// not sent.
func (s *Session) castOne(ctx context.Context, each func(surface.Frame) error) (bool, error) {
	f, err := s.paintedFrame(ctx)
	if err != nil {
		if uerr := s.usable(); uerr != nil {
			return false, uerr
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if !errors.Is(err, errUnsteady) {
			s.log.Debug("screencast frame not taken", slog.String("error", err.Error()))
		}
		return false, nil
	}
	if err := each(f); err != nil {
		if errors.Is(err, surface.ErrFrameStale) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// paintedFrame captures the visual viewport between two reads of the
// paint state and returns it with the generation of the first read; it
// returns errUnsteady when the page was animating or the reads disagree.
func (s *Session) paintedFrame(ctx context.Context) (surface.Frame, error) {
	before, steady, err := s.paintState(ctx)
	if err != nil {
		return surface.Frame{}, err
	}
	if !steady {
		return surface.Frame{}, errUnsteady
	}
	gen := s.paint.record(before)
	var (
		m      page.GetLayoutMetricsResult
		mErr   error
		wg     sync.WaitGroup
		fast   = true
		params = page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: &fast}
	)
	wg.Go(func() { m, mErr = call(ctx, s, s.page, page.GetLayoutMetrics, cdp.Empty{}) })
	shot, err := call(ctx, s, s.page, page.CaptureScreenshot, params)
	wg.Wait()
	if err != nil {
		return surface.Frame{}, fmt.Errorf("screencast capture: %w", err)
	}
	if mErr != nil {
		return surface.Frame{}, fmt.Errorf("screencast capture: layout metrics: %w", mErr)
	}
	vv := m.CSSVisualViewport
	if vv == nil || !(vv.ClientWidth > 0) || !(vv.ClientHeight > 0) {
		return surface.Frame{}, errors.New("screencast capture: the page reports no viewport")
	}
	after, steady, err := s.paintState(ctx)
	if err != nil {
		return surface.Frame{}, err
	}
	if !steady || after != before {
		return surface.Frame{}, errUnsteady
	}
	w, h, err := pngSize(shot.Data)
	if err != nil {
		return surface.Frame{}, fmt.Errorf("screencast capture: %w", err)
	}
	// The image holds the scrollbars the client size leaves out: the
	// smaller ratio is the one without a scrollbar.
	scale := math.Min(float64(w)/vv.ClientWidth, float64(h)/vv.ClientHeight)
	return surface.Frame{PNG: shot.Data, ScrollX: vv.PageX, ScrollY: vv.PageY, Scale: scale, Gen: gen}, nil
}

// pngSize returns the width and height of a PNG.
func pngSize(data []byte) (int, int, error) {
	c, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, 0, fmt.Errorf("png: %w", err)
	}
	if c.Width <= 0 || c.Height <= 0 {
		return 0, 0, errors.New("png: empty image")
	}
	return c.Width, c.Height, nil
}
