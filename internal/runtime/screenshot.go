package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/surface"
)

// maxShotTries bounds how often a screenshot is retaken because the screen
// changed while it was taken.
const maxShotTries = 3

// errScreenUnsteady: the screen changed under every screenshot attempt, so
// no set of boxes was known to match the pixels.
var errScreenUnsteady = errors.New("the screen kept changing while it was captured")

// MaskedScreenshot returns a PNG of the surface's current screen on which
// the surface painted black, before encoding, the box of every sensitive
// or password node and of every node whose text holds a registered secret
// or a key-shaped string (redact.Redactor.Boxes over the current
// snapshot, frame offsets included). The pixels are kept only when the
// surface reports no change since the snapshot the boxes came from, so a
// box never lags its field; a screen that keeps changing gives up after a
// few tries. It returns an error wrapping surface.ErrNoFrame when the
// surface cannot mask (it has no surface.MaskedScreenshotter) or has no
// pixels: raw pixels are never evidence (invariant 11).
func (d *Dispatcher) MaskedScreenshot(ctx context.Context) ([]byte, error) {
	ms, ok := d.surface.(surface.MaskedScreenshotter)
	if !ok {
		return nil, fmt.Errorf("masked screenshot: %w", surface.ErrNoFrame)
	}
	for range maxShotTries {
		snap, err := d.Observe(ctx)
		if err != nil {
			return nil, err
		}
		png, err := ms.MaskedScreenshot(ctx, d.redactor.Boxes(snap))
		if err != nil {
			return nil, domain.Wrap(surface.FailureCode(err), err, "masked screenshot")
		}
		changed, err := d.surface.ChangedSince(ctx, snap.Seq)
		if err != nil {
			return nil, domain.Wrap(surface.FailureCode(err), err, "masked screenshot")
		}
		if !changed {
			return png, nil
		}
	}
	return nil, errScreenUnsteady
}

// StepScreenshot takes d's masked screenshot of the screen after the n-th
// step result of the run (1-based) and writes it to the run's evidence as
// screenshots/step-NNN.png, returning the bundle-relative path its
// step_finished event records. It returns "" when the run writes no
// evidence, the surface has no pixels, or the screenshot failed; a failure
// is logged, never fatal: a run is not stopped for its pictures.
func (r *Run) StepScreenshot(ctx context.Context, d *Dispatcher, n int) string {
	if r.Evidence == nil || d == nil || ctx.Err() != nil {
		return ""
	}
	png, err := d.MaskedScreenshot(ctx)
	if err != nil {
		if !errors.Is(err, surface.ErrNoFrame) {
			r.Logger.WarnContext(ctx, "step screenshot skipped", slog.String("run_id", r.ID), slog.Int("step", n), slog.Any("error", err))
		}
		return ""
	}
	rel, err := r.Evidence.WriteScreenshot(evidence.ScreenshotName(n), png)
	if err != nil {
		r.Logger.WarnContext(ctx, "step screenshot not written", slog.String("run_id", r.ID), slog.Int("step", n), slog.Any("error", err))
		return ""
	}
	return rel
}
