package redact

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strings"

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
// a node nobody marked sensitive. A registered secret a page echoes split
// across several nodes (a span per group of digits, per character) is
// found too: the smallest node whose leaves' text, joined in document
// order, shows it is masked (splitBoxes).
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
	return append(boxes, r.splitBoxes(s)...)
}

// splitCap bounds the text joined under one node for splitBoxes: a larger
// container is not checked (its parts are).
const splitCap = 4096

// splitBoxes returns, for each node whose leaves' text joined in document
// order (a leaf's value, else its name) shows a registered literal (a
// secret, whole, folded or a fragment; not a pattern, which joined
// neighbours such as digits in adjacent cells would match by accident)
// that no one of its children's joined text shows, the node's box
// (the union of its children's when it has none). A node with one child
// showing text adds nothing to it and is not checked again.
func (r *Redactor) splitBoxes(s *domain.UiSnapshot) []domain.Rect {
	n := len(s.Nodes)
	text := make([]string, n)
	box := make([]domain.Rect, n)
	long := make([]bool, n)
	shows := make([]bool, n)
	done := make([]bool, n)
	var boxes []domain.Rect
	var visit func(i int)
	visit = func(i int) {
		done[i] = true
		nd := &s.Nodes[i]
		box[i] = nd.Bounds
		var kids []int
		for _, c := range nd.Children {
			if c >= 0 && c < n && !done[c] {
				visit(c)
				kids = append(kids, c)
			}
		}
		if len(nd.Children) == 0 {
			text[i] = nd.Value
			if text[i] == "" {
				text[i] = nd.Name
			}
			shows[i] = text[i] != "" && r.String(text[i]) != text[i]
			return
		}
		var b strings.Builder
		var kidsBox domain.Rect
		parts := 0
		for _, c := range kids {
			shows[i] = shows[i] || shows[c]
			long[i] = long[i] || long[c]
			if text[c] != "" {
				parts++
				b.WriteString(text[c])
				kidsBox = union(kidsBox, box[c])
			}
		}
		if box[i].Empty() {
			box[i] = kidsBox
		}
		if long[i] || b.Len() > splitCap {
			long[i], text[i] = true, ""
			return
		}
		text[i] = b.String()
		if shows[i] || parts < 2 {
			return
		}
		if len(r.literalIntervals(text[i])) > 0 {
			shows[i] = true
			if !box[i].Empty() {
				boxes = append(boxes, box[i])
			}
		}
	}
	for i := range s.Nodes {
		if !done[i] && s.Nodes[i].Parent < 0 {
			visit(i)
		}
	}
	for i := range s.Nodes {
		if !done[i] {
			visit(i)
		}
	}
	return boxes
}

// union returns the smallest box holding a and b; an empty one adds
// nothing.
func union(a, b domain.Rect) domain.Rect {
	if a.Empty() {
		return b
	}
	if b.Empty() {
		return a
	}
	x0, y0 := math.Min(a.X, b.X), math.Min(a.Y, b.Y)
	x1, y1 := math.Max(a.X+a.W, b.X+b.W), math.Max(a.Y+a.H, b.Y+b.H)
	return domain.Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
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
	var rects []image.Rectangle
	for _, b := range boxes {
		if rect, ok := pixelRect(b, scale, src.Bounds()); ok {
			rects = append(rects, rect)
		}
	}
	img := Blacken(src, rects)
	var out bytes.Buffer
	if err := png.Encode(&out, img); err != nil {
		return nil, fmt.Errorf("mask png: encode: %w", err)
	}
	return out.Bytes(), nil
}

// Blacken paints rects of src exact opaque black and returns what it
// painted: src itself when it is RGBA or NRGBA, else an NRGBA copy
// (paletted and grey images cannot hold exact black everywhere). Every
// masked screenshot, web or desktop, is painted here.
func Blacken(src image.Image, rects []image.Rectangle) draw.Image {
	var img draw.Image
	switch m := src.(type) {
	case *image.RGBA:
		img = m
	case *image.NRGBA:
		img = m
	default:
		nm := image.NewNRGBA(src.Bounds())
		draw.Draw(nm, nm.Bounds(), src, src.Bounds().Min, draw.Src)
		img = nm
	}
	black := image.NewUniform(color.NRGBA{A: 0xff})
	for _, r := range rects {
		draw.Draw(img, r, black, image.Point{}, draw.Src)
	}
	return img
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
