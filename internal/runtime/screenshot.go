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
	png, _, err := d.maskedShot(ctx)
	return png, err
}

// maskedShot is MaskedScreenshot, also returning the sequence number of
// the snapshot the pixels match.
func (d *Dispatcher) maskedShot(ctx context.Context) ([]byte, uint64, error) {
	ms, ok := d.surface.(surface.MaskedScreenshotter)
	if !ok {
		return nil, 0, fmt.Errorf("masked screenshot: %w", surface.ErrNoFrame)
	}
	for range maxShotTries {
		snap, err := d.Observe(ctx)
		if err != nil {
			return nil, 0, err
		}
		png, err := ms.MaskedScreenshot(ctx, d.redactor.Boxes(snap))
		if err != nil {
			return nil, 0, domain.Wrap(surface.FailureCode(err), err, "masked screenshot")
		}
		changed, err := d.surface.ChangedSince(ctx, snap.Seq)
		if err != nil {
			return nil, 0, domain.Wrap(surface.FailureCode(err), err, "masked screenshot")
		}
		if !changed {
			return png, snap.Seq, nil
		}
	}
	return nil, 0, errScreenUnsteady
}

// lastShot is the newest step screenshot of a run: which dispatcher took
// it, after how many of its dispatches, from which snapshot, and where it
// is.
type lastShot struct {
	d          *Dispatcher
	dispatches int
	seq        uint64
	path       string
}

// unchangedSince reports whether the screen is still the one shot: same
// dispatcher, nothing dispatched since, and no change the surface saw.
func (l *lastShot) unchangedSince(ctx context.Context, d *Dispatcher) bool {
	if l.path == "" || l.d != d || d.Dispatches() != l.dispatches {
		return false
	}
	changed, err := d.surface.ChangedSince(ctx, l.seq)
	return err == nil && !changed
}

// StepScreenshot takes d's masked screenshot of the screen after the n-th
// step result of the run (1-based) and writes it to the run's evidence as
// screenshots/step-NNN.png, returning the bundle-relative path its
// step_finished event records. A step that left the screen as the last
// screenshot showed it (nothing dispatched, no change seen: an
// extraction, an assertion) gets that screenshot's path, and costs no
// capture. It returns "" when the run writes no evidence, the surface has
// no pixels, or the screenshot failed; a failure is logged, never fatal: a
// run is not stopped for its pictures. Not safe for concurrent use.
func (r *Run) StepScreenshot(ctx context.Context, d *Dispatcher, n int) string {
	if r.Evidence == nil || d == nil || ctx.Err() != nil {
		return ""
	}
	if r.shot.unchangedSince(ctx, d) {
		return r.shot.path
	}
	png, seq, err := d.maskedShot(ctx)
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
	r.shot = lastShot{d: d, dispatches: d.Dispatches(), seq: seq, path: rel}
	return rel
}
