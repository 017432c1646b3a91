package desktop

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"log"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/surface"
)

var _ surface.MaskedScreenshotter = (*Surface)(nil)

// Screenshot photographs the application's windows from the X server (the
// bounding box of its windows, clipped to the screen) as a PNG, with the
// boxes of password fields and sensitive nodes filled black, as web
// screenshots are masked.
func (s *Surface) Screenshot(ctx context.Context) ([]byte, error) {
	return s.MaskedScreenshot(ctx, nil)
}

// MaskedScreenshot is Screenshot with every box of boxes (screen
// coordinates, as this surface's node Bounds are) filled black too, before
// the image leaves the adapter: evidence screenshots (runtime) pass the
// boxes of nodes whose text holds a registered secret.
func (s *Surface) MaskedScreenshot(ctx context.Context, boxes []domain.Rect) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return nil, err
	}
	v, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	var area domain.Rect
	for _, n := range v.snap.Nodes {
		if n.Parent == -1 && !n.Bounds.Empty() {
			area = union(area, n.Bounds)
		}
	}
	data, origin, err := grab(s.cfg.Display, area)
	if err != nil {
		return nil, fmt.Errorf("desktop screenshot: %w", err)
	}
	var local []domain.Rect
	for _, b := range append(redact.SensitiveBoxes(v.snap), boxes...) {
		local = append(local, domain.Rect{X: b.X - origin.X, Y: b.Y - origin.Y, W: b.W, H: b.H})
	}
	return redact.MaskPNG(data, local, 1)
}

func init() {
	// xgb logs to stderr by default (a missing ~/.Xauthority is normal on
	// a private Xvfb); errors reach callers as errors instead.
	xgb.Logger = log.New(io.Discard, "", 0)
}

func union(a, b domain.Rect) domain.Rect {
	if a.Empty() {
		return b
	}
	x0, y0 := min(a.X, b.X), min(a.Y, b.Y)
	x1, y1 := max(a.X+a.W, b.X+b.W), max(a.Y+a.H, b.Y+b.H)
	return domain.Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
}

// grab reads area of the X screen (the whole screen when area is empty)
// with GetImage and encodes it as PNG. It returns the area's origin.
func grab(display string, area domain.Rect) ([]byte, domain.Rect, error) {
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, domain.Rect{}, fmt.Errorf("connect X display %s: %w", display, err)
	}
	defer conn.Close()
	screen := xproto.Setup(conn).DefaultScreen(conn)
	sw, sh := int(screen.WidthInPixels), int(screen.HeightInPixels)
	r := image.Rect(0, 0, sw, sh)
	if !area.Empty() {
		r = image.Rect(int(area.X), int(area.Y), int(area.X+area.W), int(area.Y+area.H)).Intersect(r)
	}
	if r.Empty() {
		r = image.Rect(0, 0, sw, sh)
	}
	reply, err := xproto.GetImage(conn, xproto.ImageFormatZPixmap, xproto.Drawable(screen.Root),
		int16(r.Min.X), int16(r.Min.Y), uint16(r.Dx()), uint16(r.Dy()), 0xffffffff).Reply()
	if err != nil {
		return nil, domain.Rect{}, fmt.Errorf("GetImage: %w", err)
	}
	w, h := r.Dx(), r.Dy()
	if len(reply.Data) < w*h*4 {
		return nil, domain.Rect{}, fmt.Errorf("GetImage: %d bytes for %dx%d (depth %d): only 24/32-bit screens are read", len(reply.Data), w, h, reply.Depth)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < w*h; i++ {
		p := reply.Data[i*4 : i*4+4] // B, G, R, X
		img.Pix[i*4], img.Pix[i*4+1], img.Pix[i*4+2], img.Pix[i*4+3] = p[2], p[1], p[0], 0xff
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, domain.Rect{}, err
	}
	return buf.Bytes(), domain.Rect{X: float64(r.Min.X), Y: float64(r.Min.Y)}, nil
}
