package redact

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"reflect"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

// testPNG encodes a w×h image whose every pixel has a distinct, non-black
// colour.
func testPNG(tb testing.TB, img interface {
	image.Image
	Set(x, y int, c color.Color)
}) []byte {
	tb.Helper()
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			img.Set(x, y, color.NRGBA{R: uint8(10 + x*7), G: uint8(10 + y*5), B: 200, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func decodePNG(tb testing.TB, data []byte) image.Image {
	tb.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

func TestMaskPNG(t *testing.T) {
	t.Parallel()
	const w, h = 20, 16
	palette := color.Palette{color.NRGBA{R: 1, G: 2, B: 3, A: 255}, color.NRGBA{R: 200, G: 100, B: 50, A: 255}}
	tests := []struct {
		name  string
		src   []byte
		boxes []domain.Rect
		scale float64
		// masked reports whether pixel (x, y) must be black.
		masked func(x, y int) bool
	}{
		{"one box", testPNG(t, image.NewRGBA(image.Rect(0, 0, w, h))),
			[]domain.Rect{{X: 2, Y: 3, W: 4, H: 2}}, 1,
			func(x, y int) bool { return x >= 2 && x < 6 && y >= 3 && y < 5 }},
		{"scaled and widened to whole pixels", testPNG(t, image.NewNRGBA(image.Rect(0, 0, w, h))),
			[]domain.Rect{{X: 1.2, Y: 1, W: 2, H: 1.6}}, 2,
			func(x, y int) bool { return x >= 2 && x < 7 && y >= 2 && y < 6 }},
		{"two boxes, one clipped", testPNG(t, image.NewRGBA(image.Rect(0, 0, w, h))),
			[]domain.Rect{{X: 0, Y: 0, W: 1, H: 1}, {X: 18, Y: 14, W: 10, H: 10}}, 1,
			func(x, y int) bool { return (x == 0 && y == 0) || (x >= 18 && y >= 14) }},
		{"empty and outside boxes", testPNG(t, image.NewRGBA(image.Rect(0, 0, w, h))),
			[]domain.Rect{{X: 5, Y: 5, W: 0, H: 3}, {X: -10, Y: -10, W: 5, H: 5}, {X: 100, Y: 0, W: 5, H: 5}}, 1,
			func(x, y int) bool { return false }},
		{"unknown position masks everything", testPNG(t, image.NewRGBA(image.Rect(0, 0, w, h))),
			[]domain.Rect{{X: math.NaN(), Y: 0, W: 1, H: 1}}, 1,
			func(x, y int) bool { return true }},
		{"paletted", testPNG(t, image.NewPaletted(image.Rect(0, 0, w, h), palette)),
			[]domain.Rect{{X: 3, Y: 3, W: 3, H: 3}}, 1,
			func(x, y int) bool { return x >= 3 && x < 6 && y >= 3 && y < 6 }},
		{"grey", testPNG(t, image.NewGray(image.Rect(0, 0, w, h))),
			[]domain.Rect{{X: 10, Y: 0, W: 10, H: 1}}, 1,
			func(x, y int) bool { return x >= 10 && y == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := MaskPNG(tt.src, tt.boxes, tt.scale)
			if err != nil {
				t.Fatal(err)
			}
			before, after := decodePNG(t, tt.src), decodePNG(t, out)
			if before.Bounds() != after.Bounds() {
				t.Fatalf("bounds %v, want %v", after.Bounds(), before.Bounds())
			}
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					got := color.NRGBAModel.Convert(after.At(x, y)).(color.NRGBA)
					if tt.masked(x, y) {
						if got != (color.NRGBA{A: 255}) {
							t.Errorf("pixel (%d,%d) = %v, want black", x, y, got)
						}
						continue
					}
					if want := color.NRGBAModel.Convert(before.At(x, y)).(color.NRGBA); got != want {
						t.Errorf("pixel (%d,%d) = %v, want unchanged %v", x, y, got, want)
					}
				}
			}
		})
	}
}

func TestMaskPNGErrors(t *testing.T) {
	t.Parallel()
	src := testPNG(t, image.NewRGBA(image.Rect(0, 0, 2, 2)))
	box := []domain.Rect{{X: 0, Y: 0, W: 1, H: 1}}
	for _, scale := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := MaskPNG(src, box, scale); err == nil {
			t.Errorf("scale %v: no error", scale)
		}
	}
	if _, err := MaskPNG([]byte("not a png"), box, 1); err == nil {
		t.Error("garbage: no error")
	}
	if out, err := MaskPNG(src, nil, 1); err != nil || !bytes.Equal(out, src) {
		t.Errorf("no boxes: got %d bytes, %v", len(out), err)
	}
}

func TestSensitiveBoxes(t *testing.T) {
	t.Parallel()
	snap := &domain.UiSnapshot{Nodes: []domain.Node{
		{Index: 0, Role: "textbox", Bounds: domain.Rect{X: 1, Y: 1, W: 10, H: 5}, States: domain.NodeStates{Password: true}},
		{Index: 1, Role: "textbox", Bounds: domain.Rect{X: 1, Y: 10, W: 10, H: 5}, Sensitive: true},
		{Index: 2, Role: "textbox", Bounds: domain.Rect{X: 1, Y: 20, W: 10, H: 5}},
		{Index: 3, Role: "textbox", Bounds: domain.Rect{X: 1, Y: 30, W: 0, H: 5}, Sensitive: true},
		{Index: 4, Role: "StaticText", Name: "card 4111 1111 1111 1111", Bounds: domain.Rect{X: 1, Y: 40, W: 10, H: 5}},
		{Index: 5, Role: "textbox", Value: "typed hunter2", Bounds: domain.Rect{X: 1, Y: 50, W: 10, H: 5}, Children: []int{6}},
		{Index: 6, Role: "row", Name: "jane@example.com", Bounds: domain.Rect{X: 1, Y: 60, W: 10, H: 5}, Children: []int{7}},
	}}
	want := []domain.Rect{snap.Nodes[0].Bounds, snap.Nodes[1].Bounds}
	if got := SensitiveBoxes(snap); !reflect.DeepEqual(got, want) {
		t.Errorf("SensitiveBoxes = %v, want %v", got, want)
	}
	if got := SensitiveBoxes(nil); got != nil {
		t.Errorf("SensitiveBoxes(nil) = %v", got)
	}
	b := setup(t, "hunter2")
	want = append(want, snap.Nodes[4].Bounds, snap.Nodes[5].Bounds)
	if got := b.r.Boxes(snap); !reflect.DeepEqual(got, want) {
		t.Errorf("Boxes = %v, want %v", got, want)
	}
}

// TestBoxesSplitEcho: a secret a page echoes split across nodes (a span
// per group, a span per character) is masked by the smallest node that
// holds all of it; text that does not join into a secret is not, and a
// node whose own text shows the secret is masked once, by itself.
func TestBoxesSplitEcho(t *testing.T) {
	t.Parallel()
	b := setup(t, "4111-7SECRET-9876")
	leaf := func(i, parent int, name string, y float64) domain.Node {
		return domain.Node{Index: i, Parent: parent, Role: "text", Name: name, Bounds: domain.Rect{X: 1, Y: y, W: 10, H: 5}}
	}
	snap := &domain.UiSnapshot{Nodes: []domain.Node{
		{Index: 0, Parent: -1, Role: "document", Bounds: domain.Rect{W: 100, H: 100}, Children: []int{1, 5, 9}},
		// Groups in spans, in a paragraph with no box of its own.
		{Index: 1, Parent: 0, Role: "paragraph", Children: []int{2, 3, 4}},
		leaf(2, 1, "4111-", 10), leaf(3, 1, "7SECRET", 10), leaf(4, 1, "-9876", 12),
		// Ordinary text split the same way.
		{Index: 5, Parent: 0, Role: "paragraph", Bounds: domain.Rect{X: 1, Y: 30, W: 50, H: 5}, Children: []int{6, 7, 8}},
		leaf(6, 5, "Card ", 30), leaf(7, 5, "ending ", 30), leaf(8, 5, "9876", 30),
		// The whole secret in one node.
		{Index: 9, Parent: 0, Role: "paragraph", Bounds: domain.Rect{X: 1, Y: 50, W: 50, H: 5}, Children: []int{10, 11}},
		leaf(10, 9, "You typed: ", 50), leaf(11, 9, "4111-7SECRET-9876", 50),
		// Digits in adjacent cells that join into a card number's shape:
		// patterns are not matched across nodes.
		{Index: 12, Parent: 0, Role: "row", Bounds: domain.Rect{X: 1, Y: 70, W: 50, H: 5}, Children: []int{13, 14}},
		leaf(13, 12, "4111 1111", 70), leaf(14, 12, "1111 1111", 70),
	}}
	snap.Nodes[0].Children = append(snap.Nodes[0].Children, 12)
	want := []domain.Rect{snap.Nodes[11].Bounds, {X: 1, Y: 10, W: 10, H: 7}}
	if got := b.r.Boxes(snap); !reflect.DeepEqual(got, want) {
		t.Errorf("Boxes = %v, want %v (the whole-secret node, then the union of the split spans)", got, want)
	}
	// One character per span, nested one level deeper.
	chars := &domain.UiSnapshot{Nodes: []domain.Node{{Index: 0, Parent: -1, Role: "group", Bounds: domain.Rect{X: 5, Y: 5, W: 200, H: 20}}}}
	for k, r := range "4111-7SECRET-9876" {
		span := len(chars.Nodes)
		chars.Nodes[0].Children = append(chars.Nodes[0].Children, span)
		chars.Nodes = append(chars.Nodes, domain.Node{Index: span, Parent: 0, Role: "generic", Children: []int{span + 1}},
			leaf(span+1, span, string(r), 5))
		chars.Nodes[span+1].Bounds.X = 5 + float64(k)*10
	}
	if got := b.r.Boxes(chars); !reflect.DeepEqual(got, []domain.Rect{chars.Nodes[0].Bounds}) {
		t.Errorf("Boxes of a secret one character per span = %v, want the group's box", got)
	}
}
