package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

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
	png        []byte
}

// irreversibleStep is an irreversible action's step whose screen after
// is not pictured yet: its step result's number and its id.
type irreversibleStep struct {
	n    int
	step string
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
	r.steps = n
	if r.Evidence == nil || d == nil || ctx.Err() != nil {
		return ""
	}
	if r.shot.unchangedSince(ctx, d) {
		r.pictureAwaiting(ctx, n)
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
	r.shot = lastShot{d: d, dispatches: d.Dispatches(), seq: seq, path: rel, png: png}
	r.pictureAwaiting(ctx, n)
	return rel
}

// pictureAwaiting settles the irreversible steps awaiting their picture
// after, now that the screen after step result n is pictured (r.shot): n's
// own is that picture (its step_finished names it); an earlier one, whose
// screen could not be painted when it finished (a JavaScript dialog it
// opened), gets this first painted screen after it as
// step-NNN-after.png, named by a screenshot_after event.
func (r *Run) pictureAwaiting(ctx context.Context, n int) {
	for _, a := range r.awaiting {
		if a.n >= n {
			continue
		}
		rel, err := r.Evidence.WriteScreenshot(evidence.AfterScreenshotName(a.n), r.shot.png)
		if err != nil {
			r.Logger.WarnContext(ctx, "screenshot after an irreversible step not written", slog.String("run_id", r.ID), slog.Int("step", a.n), slog.Any("error", err))
			continue
		}
		r.Emit(a.step, evidence.ScreenshotAfter{Screenshot: rel, Why: fmt.Sprintf(
			"the screen after step %s (step %d) could not be pictured when it finished (a JavaScript dialog cannot be painted); "+
				"this is the first screen painted after it, the screen after step %d", a.step, a.n, n)})
	}
	r.awaiting = r.awaiting[:0]
}

// BeforeScreenshot takes d's masked screenshot of the screen an
// irreversible action was just authorized on, before it is sent, and
// writes it as screenshots/step-NNN-before.png, NNN the number of the step
// result the action belongs to (the one after the newest StepScreenshot
// was asked for): beside step-NNN.png, the screen after that step. It
// returns the bundle-relative path the action's event records, or "" when
// the run writes no evidence, the screen cannot be painted (a JavaScript
// dialog is open), or the screenshot failed: logged, never fatal, and the
// action is sent all the same. Dispatchers of Run.Dispatcher call it (see
// Config.BeforeIrreversible). Not safe for concurrent use.
func (r *Run) BeforeScreenshot(ctx context.Context, d *Dispatcher, step string) string {
	if r.Evidence == nil || d == nil || ctx.Err() != nil {
		return ""
	}
	n := r.steps + 1
	if !slices.ContainsFunc(r.awaiting, func(a irreversibleStep) bool { return a.n == n }) {
		r.awaiting = append(r.awaiting, irreversibleStep{n: n, step: step})
	}
	png, _, err := d.maskedShot(ctx)
	if errors.Is(err, surface.ErrNoFrame) {
		// A JavaScript dialog is open: nothing can be painted; the
		// picture taken after the answer shows where it led.
		r.Logger.DebugContext(ctx, "no screenshot before an irreversible action: nothing painted", slog.String("run_id", r.ID), slog.Int("step", n))
		return ""
	}
	if err != nil {
		r.Logger.WarnContext(ctx, "screenshot before an irreversible action skipped", slog.String("run_id", r.ID), slog.Int("step", n), slog.Any("error", err))
		return ""
	}
	rel, err := r.Evidence.WriteScreenshot(evidence.BeforeScreenshotName(n), png)
	if err != nil {
		r.Logger.WarnContext(ctx, "screenshot before an irreversible action not written", slog.String("run_id", r.ID), slog.Int("step", n), slog.Any("error", err))
		return ""
	}
	return rel
}
