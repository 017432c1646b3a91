package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/cuahq/cua/internal/agent"
	"github.com/cuahq/cua/internal/surface/browser"
)

// pixelPage is a white page with one password field at a fixed place,
// holding a value: white inside, its dots dark blue, so that unmasked its
// box is not black anywhere but its dots. A heading elsewhere keeps the
// page's own pixels (white, dark text) outside the box.
const pixelPage = `<!doctype html>
<html><head><title>Sign on</title><style>
html, body { margin: 0; background: #fff; }
h1 { position: absolute; left: 40px; top: 10px; margin: 0; font: 24px sans-serif; color: #222; }
#pw { position: absolute; left: 40px; top: 80px; width: 240px; height: 40px; box-sizing: border-box;
      margin: 0; padding: 0 8px; border: 0; outline: 0; background: #fff; color: #00c; font: 28px monospace; }
</style></head><body>
<h1>Sign on</h1>
<label for="pw" style="position:absolute;left:300px;top:90px;font:16px sans-serif">Password</label>
<input id="pw" type="password" value="Pixel-Canary-Value-0042">
</body></html>`

// pwBox is #pw's box in CSS pixels.
var pwBox = image.Rect(40, 80, 40+240, 80+40)

// TestFrameMasksSensitiveBoxByPixel: a frame-requiring model on the real
// browser surface (which takes screenshots) gets a frame in which the
// password field's box is opaque black, pixel by pixel, while the rest of
// the page is not. Mutations killed: agent's decide handing the model the
// raw screenshot (MaskPNG dropped), redact.SensitiveBoxes returning no
// boxes, and MaskPNG filling no pixel.
func TestFrameMasksSensitiveBoxByPixel(t *testing.T) {
	t.Parallel()
	exe := browser.DefaultExecPath
	if v := os.Getenv("CUA_BROWSER"); v != "" {
		exe = v
	}
	if _, err := os.Stat(exe); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no browser at %s under CI", exe)
		}
		t.Skipf("no browser at %s", exe)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, pixelPage)
	}))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second) // Chromium on a loaded CI machine
	defer cancel()
	br, err := browser.Launch(ctx, browser.Options{})
	if err != nil {
		t.Fatalf("launch browser: %v", err)
	}
	t.Cleanup(func() { br.Close() })
	sess, err := br.NewSession(ctx)
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	t.Cleanup(func() { sess.Close() })

	m := &visionModel{}
	res, err := agent.Run(ctx, agent.Config{
		Model: m, Surface: sess, Goal: "Sign on", BaseURL: srv.URL, RunID: runID,
		Autonomy: agent.LevelAuto, Budget: agent.Budget{MaxSteps: 2}, VerifyWait: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := m.requests()
	if len(reqs) == 0 {
		t.Fatalf("the model was never asked (run ended %s: %s)", res.Status, res.Reason)
	}
	frame := reqs[0].Screenshot
	if len(frame) == 0 {
		t.Fatalf("the frame-requiring model got no screenshot (run ended %s: %s)", res.Status, res.Reason)
	}
	img, err := png.Decode(bytes.NewReader(frame))
	if err != nil {
		t.Fatalf("the frame is not a PNG: %v", err)
	}
	if !pwBox.In(img.Bounds()) {
		t.Fatalf("frame %v does not hold the password box %v", img.Bounds(), pwBox)
	}
	if err := checkMasked(img, pwBox); err != nil {
		t.Error(err)
	}
}

// checkMasked reports an error unless every pixel of box is opaque black
// (the mask) and the page outside it has pixels that are not black.
func checkMasked(img image.Image, box image.Rectangle) error {
	var errs []error
	unmasked := 0
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			if !isMask(img, x, y) {
				if unmasked == 0 {
					r, g, b, a := img.At(x, y).RGBA()
					errs = append(errs, fmt.Errorf("pixel (%d,%d) inside the password box is %04x/%04x/%04x/%04x, want the opaque black mask", x, y, r, g, b, a))
				}
				unmasked++
			}
		}
	}
	if unmasked > 0 {
		errs = append(errs, fmt.Errorf("%d of %d pixels of the password box are not masked", unmasked, box.Dx()*box.Dy()))
	}
	outside := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if !(image.Point{x, y}).In(box) && !isMask(img, x, y) {
				outside++
			}
		}
	}
	if outside == 0 {
		errs = append(errs, errors.New("every pixel outside the password box is black too: the whole frame was masked"))
	}
	// A white pixel beside the box: the page itself is shown.
	if r, g, bl, _ := img.At(box.Min.X+5, box.Max.Y+10).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
		errs = append(errs, fmt.Errorf("pixel below the box is %04x/%04x/%04x, want the page's white", r, g, bl))
	}
	return errors.Join(errs...)
}

func isMask(img image.Image, x, y int) bool {
	r, g, b, a := img.At(x, y).RGBA()
	return r == 0 && g == 0 && b == 0 && a == 0xffff
}
