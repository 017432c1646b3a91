package redact

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"

	"github.com/cuahq/cua/internal/domain"
)

// SensitiveBoxes returns the boxes of the nodes of s whose content must not
// appear in a screenshot: password fields (States.Password) and nodes marked
// Sensitive. Nodes without area are left out. It returns nil for a nil
// snapshot.
func SensitiveBoxes(s *domain.UiSnapshot) []domain.Rect {
	if s == nil {
		return nil
	}
	var boxes []domain.Rect
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if (n.States.Password || n.Sensitive) && !n.Bounds.Empty() {
			boxes = append(boxes, n.Bounds)
		}
	}
	return boxes
}

// Boxes returns SensitiveBoxes(s) and the boxes of the nodes whose own text
// (the value of any node; the name and description of a node without
// children, so that a container named after its content is not blacked out
// whole) holds a registered literal or a pattern: a secret the page shows in
// a node nobody marked sensitive.
func (r *Redactor) Boxes(s *domain.UiSnapshot) []domain.Rect {
	boxes := SensitiveBoxes(s)
	if s == nil {
		return boxes
	}
	changed := func(t string) bool { return t != "" && r.String(t) != t }
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.States.Password || n.Sensitive || n.Bounds.Empty() {
			continue
		}
		if changed(n.Value) || (len(n.Children) == 0 && (changed(n.Name) || changed(n.Description))) {
			boxes = append(boxes, n.Bounds)
		}
	}
	return boxes
}

// MaskPNG returns a copy of the PNG image data with each box filled with
// opaque black. Boxes are in CSS pixels relative to the captured area's top
// left corner (for a viewport screenshot, viewport coordinates: translate
// page coordinates by the scroll offset first); scale is the number of image
// pixels per CSS pixel (the device pixel ratio). Each box is widened to
// whole pixels, so a partly covered pixel is masked too, and clipped to the
// image. A box with a NaN or infinite coordinate masks the whole image: a
// sensitive node whose position is unknown could be anywhere.
//
// With no boxes, data is returned as is. MaskPNG returns an error if scale
// is not a positive finite number or data is not a PNG.
func MaskPNG(data []byte, boxes []domain.Rect, scale float64) ([]byte, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("mask png: invalid scale %v", scale)
	}
	if len(boxes) == 0 {
		return data, nil
	}
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("mask png: decode: %w", err)
	}
	var img draw.Image
	switch m := src.(type) {
	case *image.RGBA:
		img = m
	case *image.NRGBA:
		img = m
	default: // paletted and grey images cannot hold exact black everywhere
		nm := image.NewNRGBA(src.Bounds())
		draw.Draw(nm, nm.Bounds(), src, src.Bounds().Min, draw.Src)
		img = nm
	}
	black := image.NewUniform(color.NRGBA{A: 0xff})
	for _, b := range boxes {
		if rect, ok := pixelRect(b, scale, img.Bounds()); ok {
			draw.Draw(img, rect, black, image.Point{}, draw.Src)
		}
	}
	var out bytes.Buffer
	if err := png.Encode(&out, img); err != nil {
		return nil, fmt.Errorf("mask png: encode: %w", err)
	}
	return out.Bytes(), nil
}

// pixelRect converts a CSS box to the image pixels it touches, clipped to
// bounds.
func pixelRect(b domain.Rect, scale float64, bounds image.Rectangle) (image.Rectangle, bool) {
	for _, f := range []float64{b.X, b.Y, b.W, b.H} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return bounds, true
		}
	}
	if b.Empty() {
		return image.Rectangle{}, false
	}
	clamp := func(f float64, lo, hi int) int {
		return int(math.Max(float64(lo), math.Min(float64(hi), f)))
	}
	w, h := bounds.Dx(), bounds.Dy()
	r := image.Rect(
		clamp(math.Floor(b.X*scale), 0, w),
		clamp(math.Floor(b.Y*scale), 0, h),
		clamp(math.Ceil((b.X+b.W)*scale), 0, w),
		clamp(math.Ceil((b.Y+b.H)*scale), 0, h),
	).Add(bounds.Min)
	if r.Empty() {
		return image.Rectangle{}, false
	}
	return r, true
}
