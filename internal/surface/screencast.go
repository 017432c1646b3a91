package surface

import "context"

// Frame is one screencast frame: a PNG of the viewport and where it sits
// on the page. Raw frames are runtime inputs, never evidence: a consumer
// masks sensitive nodes before a frame leaves the process (invariant 11).
type Frame struct {
	PNG []byte
	// ScrollX and ScrollY are the page's scroll offset in CSS pixels;
	// Scale is image pixels per CSS pixel.
	ScrollX, ScrollY, Scale float64
}

// Screencaster is the optional ability to stream the view as it changes
// (the operator console's live picture). Screencast calls each for every
// frame until ctx ends or each returns an error; a slow each slows the
// cast rather than queueing frames. It may run beside the surface's other
// methods.
type Screencaster interface {
	Screencast(ctx context.Context, each func(Frame) error) error
}
