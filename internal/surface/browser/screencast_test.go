package browser

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"

	"github.com/cuahq/cua/internal/surface"
)

// castFrames runs a screencast of e's page for d and returns the frames it
// sent, each checked against Unchanged at once (true for a still page).
func castFrames(t *testing.T, e *env, d time.Duration, each func(surface.Frame) error) []surface.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, d)
	defer cancel()
	var frames []surface.Frame
	err := e.s.Screencast(ctx, func(f surface.Frame) error {
		frames = append(frames, f)
		if each != nil {
			return each(f)
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Fatalf("screencast: %v", err)
	}
	return frames
}

func (e *env) eval(t *testing.T, expr string) {
	t.Helper()
	res, err := call(e.ctx, e.s, e.s.page, runtime.Evaluate, runtime.EvaluateParams{Expression: expr})
	if err != nil || res.ExceptionDetails != nil {
		t.Fatalf("evaluate %s: %v %+v", expr, err, res.ExceptionDetails)
	}
}

// TestScreencastStillPage: a page that holds still streams, in every
// document (same-origin frames, an out-of-process frame); a frame's
// generation stays current until the page changes, and a change brings a
// new frame.
func TestScreencastStillPage(t *testing.T) {
	t.Parallel()
	for _, pg := range []struct{ path, heading string }{{"/main.html", "Conformance"}, {"/frames.html", "Frames"}, {"/oopif.html", "Remote"}} {
		t.Run(pg.path, func(t *testing.T) {
			e := newEnv(t, server(t))
			e.load(t, pg.path, pg.heading)
			var first *surface.Frame
			frames := castFrames(t, e, 30*time.Second, func(f surface.Frame) error {
				if first == nil {
					first = &f
					ok, err := e.s.Unchanged(e.ctx, f.Gen)
					if err != nil || !ok {
						t.Errorf("a still page's frame is not current at once: %v, %v", ok, err)
					}
					e.eval(t, `document.querySelector('h1').textContent = 'Changed'`)
					ok, err = e.s.Unchanged(e.ctx, f.Gen)
					if err != nil || ok {
						t.Errorf("after a change the first frame is still current: %v, %v", ok, err)
					}
					return nil
				}
				return context.Canceled // the frame after the change: enough
			})
			if len(frames) < 2 {
				t.Fatalf("%s sent %d frames in 30 s; want the first and one after a change", pg.path, len(frames))
			}
			if f := frames[0]; len(f.PNG) == 0 || !(f.Scale > 0) || f.Gen == 0 {
				t.Errorf("first frame: %d bytes, scale %v, gen %d", len(f.PNG), f.Scale, f.Gen)
			}
		})
	}
}

// TestScreencastMovingPage: a page that never holds still (a CSS
// animation; a script re-setting a text every frame) sends no frame, and
// a stale frame the consumer drops is followed by a fresh one once the
// page settles.
func TestScreencastMovingPage(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"css", "js"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, server(t))
			e.load(t, "/t/moving.html?"+mode, "Moving")
			if frames := castFrames(t, e, 3*time.Second, nil); len(frames) != 0 {
				t.Errorf("a page moving by %s sent %d frames", mode, len(frames))
			}
			e.eval(t, `document.body.className = ''; window.requestAnimationFrame = () => 0`)
			drops := 0
			frames := castFrames(t, e, 20*time.Second, func(f surface.Frame) error {
				if drops < 2 {
					drops++
					return surface.ErrFrameStale
				}
				return context.Canceled
			})
			if len(frames) != 3 {
				t.Errorf("a settled page sent %d frames after two drops, want 3 (two dropped, then a fresh one)", len(frames))
			}
		})
	}
}
