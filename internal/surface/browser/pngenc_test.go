package browser

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/chromedp/cdproto/page"

	"github.com/cuahq/cua/internal/domain"
)

// screenLike returns a w×h opaque RGBA image that looks like a back-office
// screen: flat background, bordered boxes, rows of "text" noise.
func screenLike(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			c := color.RGBA{0xf4, 0xf4, 0xf4, 0xff}
			switch {
			case x%150 == 0 || y%90 == 0:
				c = color.RGBA{0x88, 0x88, 0x88, 0xff}
			case y%18 < 12 && x%150 > 10 && x%150 < 120 && r.IntN(3) == 0:
				v := uint8(r.IntN(90))
				c = color.RGBA{v, v, v + 20, 0xff}
			}
			m.SetRGBA(x, y, c)
		}
	}
	return m
}

func samePixels(t *testing.T, want image.Image, data []byte) {
	t.Helper()
	got, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the encoded image is not a PNG Go can read: %v", err)
	}
	wb := want.Bounds()
	if got.Bounds().Dx() != wb.Dx() || got.Bounds().Dy() != wb.Dy() {
		t.Fatalf("size %v, want %v", got.Bounds().Size(), wb.Size())
	}
	for y := range wb.Dy() {
		for x := range wb.Dx() {
			r1, g1, b1, a1 := want.At(wb.Min.X+x, wb.Min.Y+y).RGBA()
			r2, g2, b2, a2 := got.At(got.Bounds().Min.X+x, got.Bounds().Min.Y+y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				t.Fatalf("pixel %d,%d = %v, want %v", x, y, got.At(x, y), want.At(wb.Min.X+x, wb.Min.Y+y))
			}
		}
	}
}

// TestEncodePNGIsLossless: the fast encoder's PNG decodes to exactly the
// pixels it was given (a sub-image included), and an image it does not
// handle (with transparency) goes through image/png unchanged.
func TestEncodePNGIsLossless(t *testing.T) {
	t.Parallel()
	full := screenLike(301, 77)
	sub := full.SubImage(image.Rect(13, 5, 250, 70)).(*image.RGBA)
	for name, img := range map[string]image.Image{"screen": full, "sub-image": sub} {
		out, err := encodePNG(img)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.HasPrefix(out, []byte(pngMagic)) {
			t.Fatalf("%s: no PNG signature", name)
		}
		samePixels(t, img, out)
	}
	clear := screenLike(20, 10)
	clear.SetRGBA(3, 3, color.RGBA{})
	out, err := encodePNG(clear)
	if err != nil {
		t.Fatal(err)
	}
	samePixels(t, clear, out)
}

// TestMaskViewportOffScreenBoxes: boxes that touch no pixel of the
// viewport leave Chromium's PNG as it was (not decoded, not encoded);
// one box on screen is painted on the fast encoder's output.
func TestMaskViewportOffScreenBoxes(t *testing.T) {
	t.Parallel()
	img := screenLike(40, 30)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	vv := &page.VisualViewport{ClientWidth: 40, ClientHeight: 30, PageY: 100}
	off := []domain.Rect{{X: 0, Y: 10, W: 40, H: 20}, {X: 0, Y: 200, W: 5, H: 5}, {X: 10, Y: 120, W: 0, H: 4}}
	out, err := maskViewport(buf.Bytes(), off, vv)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, buf.Bytes()) {
		t.Error("boxes outside the viewport changed the PNG")
	}
	out, err = maskViewport(buf.Bytes(), append(off, domain.Rect{X: 2, Y: 102, W: 3, H: 3}), vv)
	if err != nil {
		t.Fatal(err)
	}
	want := image.NewRGBA(img.Rect)
	copy(want.Pix, img.Pix)
	for y := 2; y < 5; y++ {
		for x := 2; x < 5; x++ {
			want.SetRGBA(x, y, color.RGBA{A: 0xff})
		}
	}
	samePixels(t, want, out)
}

// BenchmarkEncodePNG compares the encoder of masked screenshots with
// image/png at BestSpeed (what MaskedScreenshot used before) on a
// screen-sized image.
func BenchmarkEncodePNG(b *testing.B) {
	img := screenLike(1280, 720)
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			out, err := encodePNG(img)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(out)), "png-bytes")
		}
	})
	b.Run("image-png-bestspeed", func(b *testing.B) {
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		for b.Loop() {
			var buf bytes.Buffer
			if err := enc.Encode(&buf, img); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(buf.Len()), "png-bytes")
		}
	})
}
