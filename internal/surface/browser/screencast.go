package browser

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cuahq/cua/internal/surface"
)

var _ surface.Screencaster = (*Session)(nil)

// Screencast streams the page's frames (CDP Page.startScreencast, PNG) to
// each until ctx ends or each returns an error, acknowledging every frame
// after each returns, so a slow consumer slows the cast instead of queueing
// frames. It may run beside the session's other methods: it only starts,
// acknowledges and stops the cast.
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
	frames := chromedp.Events(cctx, page.ScreencastFrame)
	if _, err := cdp.Call(cctx, s.page.t, page.StartScreencast, page.StartScreencastParams{Format: page.StartScreencastFormatPng, EveryNthFrame: 1}); err != nil {
		return fmt.Errorf("screencast: %w", err)
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer scancel()
		_, _ = cdp.Call(sctx, s.page.t, page.StopScreencast, cdp.Empty{})
	}()
	for ev, err := range frames {
		if err != nil {
			if cctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("screencast: %w", err)
		}
		f := surface.Frame{PNG: ev.Data, Scale: 1}
		if m := ev.Metadata; m != nil {
			f.ScrollX, f.ScrollY = m.ScrollOffsetX, m.ScrollOffsetY
			if m.DeviceWidth > 0 && m.PageScaleFactor > 0 {
				f.Scale = m.PageScaleFactor
			}
		}
		if err := each(f); err != nil {
			return err
		}
		if _, err := cdp.Call(cctx, s.page.t, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: ev.SessionID}); err != nil {
			return fmt.Errorf("screencast ack: %w", err)
		}
	}
	return ctx.Err()
}
