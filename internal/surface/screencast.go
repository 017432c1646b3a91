package surface

import (
	"context"
	"errors"
)

// Frame is one screencast frame: a PNG of the viewport and where it sits
// on the page. Raw frames are runtime inputs, never evidence: a consumer
// masks sensitive nodes before a frame leaves the process (invariant 11).
type Frame struct {
	PNG []byte
	// ScrollX and ScrollY are the page's scroll offset in CSS pixels;
	// Scale is image pixels per CSS pixel.
	ScrollX, ScrollY, Scale float64
	// Gen names the state of the page the frame was painted from: the
	// change generation the caster read before the paint, with nothing
	// changed between that read and the paint. A snapshot taken after the
	// frame arrived describes the frame's pixels exactly when
	// Screencaster.Unchanged(Gen) still holds after the snapshot.
	Gen uint64
}

// ErrFrameStale is what a consumer's each returns for a frame it did not
// use because the page changed under it (Unchanged was false) or could
// not be masked: the caster sends a fresh frame soon even when the page
// paints nothing new, so the consumer is not left with an old picture of a
// page that has since settled.
var ErrFrameStale = errors.New("frame is stale")

// Screencaster is the optional ability to stream the view as it changes
// (the operator console's live picture). Screencast calls each for every
// frame until ctx ends or each returns an error other than
// ErrFrameStale; a slow each slows the cast rather than queueing frames.
// It sends only frames painted while the page held still (no change
// between the generation read and the paint, no animation running): a page
// that never holds still gets no frame. It may run beside the surface's
// other methods.
type Screencaster interface {
	Screencast(ctx context.Context, each func(Frame) error) error
	// Unchanged reports whether the page has reported no change (a DOM
	// mutation, input, focus move, scroll, resize, hover, animation or
	// transition event, a document replaced) since generation gen was
	// read, and runs no animation now. It answers false on any doubt: a
	// generation the caster no longer remembers, a document whose changes
	// it cannot see. Safe to call from each.
	Unchanged(ctx context.Context, gen uint64) (bool, error)
}
