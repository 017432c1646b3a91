package desktop_test

import (
	"bytes"
	"context"
	"image/png"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/perception"
	"github.com/cuahq/cua/internal/surface/surfacetest"
)

// TestScreenshotMasksPasswordField types into a password field and checks
// the X screenshot has the field's box black and the rest of the window not.
func TestScreenshotMasksPasswordField(t *testing.T) {
	t.Parallel()
	s := openFixture(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // Xvfb, AT-SPI and an app on a loaded CI machine; only a hang meets it
	defer cancel()
	eng := newEngine(t, "fixture")
	if _, err := s.Dispatch(ctx, nav(t, eng, "http://fixture/secret.html")); err != nil {
		t.Fatal(err)
	}
	raw, err := s.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := perception.Normalize(raw)
	pin, ok := surfacetest.Find(snap, domain.RoleTextbox, "PIN", "")
	if !ok || !pin.States.Password || !pin.Sensitive {
		t.Fatalf("PIN = %+v (found %v), want a sensitive password field:\n%s", pin, ok, surfacetest.Dump(snap))
	}
	if _, err := s.Dispatch(ctx, authorize(t, eng, domain.Action{Type: domain.ActType, Value: domain.Lit("4321")}, &pin, "4321")); err != nil {
		t.Fatal(err)
	}
	win, _ := surfacetest.Find(snap, domain.RoleDocument, "Secret", "")
	data, err := s.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	at := func(x, y float64) (uint32, uint32, uint32) {
		r, g, b, _ := img.At(int(x-win.Bounds.X), int(y-win.Bounds.Y)).RGBA()
		return r, g, b
	}
	cx, cy := pin.Bounds.Center()
	for _, p := range [][2]float64{{cx, cy}, {pin.Bounds.X + 1, pin.Bounds.Y + 1}, {pin.Bounds.X + pin.Bounds.W - 2, pin.Bounds.Y + pin.Bounds.H - 2}} {
		if r, g, b := at(p[0], p[1]); r|g|b != 0 {
			t.Errorf("pixel (%.0f,%.0f) inside the PIN field is not black", p[0], p[1])
		}
	}
	if r, g, b := at(pin.Bounds.X+pin.Bounds.W/2, pin.Bounds.Y+pin.Bounds.H+20); r|g|b == 0 {
		t.Error("the window below the PIN field is black too")
	}
	if b := img.Bounds(); b.Dx() < int(win.Bounds.W) || b.Dy() < int(win.Bounds.H) {
		t.Errorf("screenshot %v is smaller than the window %+v", b, win.Bounds)
	}

	// Evidence passes more boxes (text holding a registered secret): the
	// area below the field, white above, is black in the masked shot.
	below := domain.Rect{X: pin.Bounds.X + pin.Bounds.W/2 - 5, Y: pin.Bounds.Y + pin.Bounds.H + 15, W: 10, H: 10}
	data, err = s.MaskedScreenshot(ctx, []domain.Rect{below})
	if err != nil {
		t.Fatal(err)
	}
	if img, err = png.Decode(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	bx, by := below.Center()
	for _, p := range [][2]float64{{bx, by}, {cx, cy}} {
		if r, g, b := at(p[0], p[1]); r|g|b != 0 {
			t.Errorf("masked shot: pixel (%.0f,%.0f) is not black", p[0], p[1])
		}
	}
}
