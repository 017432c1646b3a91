package desktop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
)

var _ surface.Screencaster = (*Surface)(nil)

// castIdle is how often a screencast repaints an application that
// announced no change (a frame the consumer found stale is replaced soon
// even when nothing changes).
const castIdle = time.Second

// Screencast streams the application's windows (the X screen's bounding
// box of them, unmasked: the consumer masks, invariant 11) as they change:
// it paints after every change the application announces over AT-SPI, and
// at least every castIdle. A frame's ScrollX and ScrollY are its origin on
// the screen and Scale is 1, so the consumer maps a point of the image to
// the screen coordinates of this surface's node Bounds. A frame is sent
// only when no change arrived between reading the generation and the
// paint.
func (s *Surface) Screencast(ctx context.Context, each func(surface.Frame) error) error {
	for {
		f, wake, err := s.paint(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrClosed) || errors.Is(err, surface.ErrCrashed):
			return err
		case err == nil:
			if err := each(f); err != nil && !errors.Is(err, surface.ErrFrameStale) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
			// Let the application finish painting what it announced.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(50 * time.Millisecond):
			}
		case <-time.After(castIdle):
		}
	}
}

// paint grabs one frame and returns the channel the next change closes.
// It returns an error for a frame painted while the application changed.
func (s *Surface) paint(ctx context.Context) (surface.Frame, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wake := s.waiterLocked()
	if err := s.usableLocked(); err != nil {
		return surface.Frame{}, wake, err
	}
	v, err := s.read(ctx)
	if err != nil {
		return surface.Frame{}, wake, err
	}
	gen := s.gen
	var area domain.Rect
	for _, n := range v.snap.Nodes {
		if n.Parent == -1 && !n.Bounds.Empty() {
			area = union(area, n.Bounds)
		}
	}
	data, origin, err := grab(s.cfg.Display, area)
	if err != nil {
		return surface.Frame{}, wake, fmt.Errorf("desktop screencast: %w", err)
	}
	if s.gen != gen {
		return surface.Frame{}, wake, surface.ErrFrameStale
	}
	return surface.Frame{PNG: data, ScrollX: origin.X, ScrollY: origin.Y, Scale: 1, Gen: gen}, wake, nil
}

// Unchanged reports whether the application announced no change since
// generation gen was read (a frame's Gen).
func (s *Surface) Unchanged(ctx context.Context, gen uint64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return false, err
	}
	return s.gen == gen, nil
}
