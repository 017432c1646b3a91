package browser

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/surface"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// maskServer serves a scrollable green page with a red password field in
// the top document, one in a same-site iframe and one in a cross-site
// (out-of-process) iframe on localhost.
func maskServer(tb testing.TB) *httptest.Server {
	tb.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/mask", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := strings.Cut(r.Host, ":")
		fmt.Fprintf(w, `<!doctype html><title>Mask</title>
<body style="margin:0;background:#00ff00;height:3000px">
<h1 style="margin:0;height:40px">Mask</h1>
<input type="password" aria-label="Main PIN" value="1234" style="position:absolute;left:20px;top:220px;width:120px;height:30px;background:#ff0000;border:0">
<iframe name="inner" src="/maskframe?who=inner" style="position:absolute;left:200px;top:200px;width:300px;height:150px;border:0"></iframe>
<iframe name="remote" src="http://localhost:%s/maskframe?who=remote" style="position:absolute;left:200px;top:380px;width:300px;height:150px;border:0"></iframe>
</body>`, port)
	})
	mux.HandleFunc("/maskframe", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Frame</title>
<body style="margin:0;background:#0000ff">
<input type="password" aria-label="%s PIN" value="9876" style="position:absolute;left:30px;top:40px;width:100px;height:30px;background:#ff0000;border:0">
</body>`, r.URL.Query().Get("who"))
	})
	mux.HandleFunc("/alert", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Alert</title><h1>Alert</h1><script>setTimeout(() => alert("maintenance"), 50)</script>`)
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

func decode(tb testing.TB, data []byte) image.Image {
	tb.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("decode png: %v", err)
	}
	return img
}

// rgbAt is the 8-bit colour of the image pixel under page point (x, y) of a
// viewport scrolled to scrollY, at scale image pixels per CSS pixel.
func rgbAt(img image.Image, x, y, scrollY, scale float64) [3]uint8 {
	r, g, b, _ := img.At(int(x*scale), int((y-scrollY)*scale)).RGBA()
	return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

func TestMaskedScreenshotPaintsSensitiveBoxesInEveryFrame(t *testing.T) {
	t.Parallel()
	e := newEnv(t, maskServer(t))
	e.must(t, domain.Action{Type: domain.ActNavigate, URL: e.srv.URL + "/mask"}, nil, "")
	e.waitFor(t, "three password fields", func(s *domain.UiSnapshot) bool {
		_, a := surfacetest.Find(s, "textbox", "Main PIN", "")
		_, b := surfacetest.Find(s, "textbox", "inner PIN", "inner")
		_, c := surfacetest.Find(s, "textbox", "remote PIN", "remote")
		return a && b && c
	})
	// Scroll, so the page-to-viewport translation is exercised too.
	const scrollY = 100
	if _, err := call(e.ctx, e.s, e.s.page, runtime.Evaluate, runtime.EvaluateParams{Expression: "window.scrollTo(0, 100)"}); err != nil {
		t.Fatal(err)
	}
	snap := e.waitFor(t, "the scrolled page", func(s *domain.UiSnapshot) bool {
		n, ok := surfacetest.Find(s, "textbox", "remote PIN", "remote")
		return ok && !n.Bounds.Empty()
	})
	var boxes []domain.Rect
	var fields []domain.Node
	for _, n := range snap.Nodes {
		if n.States.Password {
			boxes = append(boxes, n.Bounds)
			fields = append(fields, n)
		}
	}
	if len(fields) != 3 {
		t.Fatalf("want 3 password nodes, got %d:\n%s", len(fields), surfacetest.Dump(snap))
	}
	raw, err := e.s.Screenshot(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	masked, err := e.s.MaskedScreenshot(e.ctx, boxes)
	if err != nil {
		t.Fatal(err)
	}
	// Taking it is no change the page sees (a clipped capture would be).
	if changed, err := e.s.ChangedSince(e.ctx, snap.Seq); err != nil || changed {
		t.Errorf("ChangedSince after the screenshot = %v, %v; want false", changed, err)
	}
	rawImg, img := decode(t, raw), decode(t, masked)
	scale := float64(img.Bounds().Dx()) / float64(rawImg.Bounds().Dx())
	if scale != 1 {
		t.Logf("device scale: masked image %v, raw %v", img.Bounds(), rawImg.Bounds())
	}
	red, black := [3]uint8{255, 0, 0}, [3]uint8{0, 0, 0}
	for _, n := range fields {
		b := n.Bounds
		inside := [][2]float64{{b.X + 2, b.Y + 2}, {b.X + b.W/2, b.Y + b.H/2}, {b.X + b.W - 2, b.Y + b.H - 2}}
		// The unmasked frame shows the field's red: the black below is the
		// mask's.
		if got := rgbAt(rawImg, b.X+2, b.Y+2, scrollY, 1); got != red {
			t.Errorf("%s %q: raw pixel at its corner is %v, want the field's red", n.Frame, n.Name, got)
		}
		for _, p := range inside {
			if got := rgbAt(img, p[0], p[1], scrollY, scale); got != black {
				t.Errorf("%s %q (box %+v): masked pixel at %v is %v, want black", n.Frame, n.Name, b, p, got)
			}
		}
		// Just outside the box the page is as it was.
		if got := rgbAt(img, b.X-3, b.Y+b.H/2, scrollY, scale); got == black || got == red {
			t.Errorf("%s %q: pixel left of the box is %v: the mask spilled or missed", n.Frame, n.Name, got)
		}
	}
}

func TestMaskViewportUnknownPositionMasksAll(t *testing.T) {
	t.Parallel()
	img := image.NewNRGBA(image.Rect(0, 0, 8, 6))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	vp := &page.VisualViewport{ClientWidth: 8, ClientHeight: 6}
	nan := 0.0
	nan /= nan
	out, err := maskViewport(buf.Bytes(), []domain.Rect{{X: nan, Y: 1, W: 1, H: 1}}, vp)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, out)
	for y := range 6 {
		for x := range 8 {
			if r, g, b, _ := got.At(x, y).RGBA(); r|g|b != 0 {
				t.Fatalf("pixel %d,%d not black", x, y)
			}
		}
	}
	if _, err := maskViewport([]byte("not a png"), nil, vp); err == nil {
		t.Fatal("a non-PNG was accepted")
	}
}

// TestMaskViewportScrollbar: when the image's width and height give two
// scales (a scrollbar outside the viewport's client size), a box is
// painted under both.
func TestMaskViewportScrollbar(t *testing.T) {
	t.Parallel()
	img := image.NewNRGBA(image.Rect(0, 0, 10, 10))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	out, err := maskViewport(buf.Bytes(), []domain.Rect{{X: 4, Y: 0, W: 1, H: 1}}, &page.VisualViewport{ClientWidth: 8, ClientHeight: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, out)
	for x := range 10 {
		r, _, _, _ := got.At(x, 0).RGBA()
		// Scale 1 paints x 4; scale 1.25 paints x 5 and 6 (5 to 6.25).
		if want := x >= 4 && x <= 6; (r == 0) != want {
			t.Errorf("pixel %d black = %v, want %v", x, r == 0, want)
		}
	}
}

// TestMaskedScreenshotUnderADialog: while a JavaScript dialog is open the
// page cannot paint, which is no frame, not a failure.
func TestMaskedScreenshotUnderADialog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, maskServer(t))
	e.must(t, domain.Action{Type: domain.ActNavigate, URL: e.srv.URL + "/alert"}, nil, "")
	e.waitFor(t, "the alert", func(s *domain.UiSnapshot) bool { return s.Dialog != nil })
	if _, err := e.s.MaskedScreenshot(e.ctx, nil); !errors.Is(err, surface.ErrNoFrame) {
		t.Errorf("MaskedScreenshot under a dialog: %v, want ErrNoFrame", err)
	}
}
