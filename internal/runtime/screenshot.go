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
// is ("" when it was taken only to picture an earlier step's screen after,
// and kept under no name of its own).
type lastShot struct {
	d          *Dispatcher
	dispatches int
	seq        uint64
	path       string
	png        []byte
}

// irreversibleStep is an elevated or irreversible action's step whose
// screen after is not pictured yet: its step result's number and its id.
type irreversibleStep struct {
	n    int
	step string
}

// unchangedSince reports whether the screen is still the one shot: same
// dispatcher, nothing dispatched since, and no change the surface saw.
func (l *lastShot) unchangedSince(ctx context.Context, d *Dispatcher) bool {
	if l.png == nil || l.d != d || d.Dispatches() != l.dispatches {
		return false
	}
	changed, err := d.surface.ChangedSince(ctx, l.seq)
	return err == nil && !changed
}

// EvidenceLevel is the run's evidence level (RunConfig.EvidenceLevel).
func (r *Run) EvidenceLevel() domain.EvidenceLevel { return r.level }

// stepReason is why the run's level keeps the screen after a step the
// engine gave reason for ("" when it gave none): under full every step's
// screen is kept (its own reason, else full); under decisive the engine's
// reason; under none only an elevated step's screen after and a failed
// step's.
func (r *Run) stepReason(reason string) string {
	switch r.level {
	case domain.EvidenceFull:
		if reason == "" {
			return evidence.ReasonFull
		}
	case domain.EvidenceNone:
		if reason != evidence.ReasonAfterElevated && reason != evidence.ReasonFailure {
			return ""
		}
	}
	return reason
}

// awaitingBefore reports whether an elevated step before step result n
// still waits for its screen after to be pictured.
func (r *Run) awaitingBefore(n int) bool {
	return slices.ContainsFunc(r.awaiting, func(a irreversibleStep) bool { return a.n < n })
}

// keep writes png as the bundle's screenshot name and records why it was
// kept (a screenshot_kept event of step); it returns the bundle-relative
// path, "" when it could not be written (logged).
func (r *Run) keep(ctx context.Context, step, name string, png []byte, reason string) string {
	rel, err := r.Evidence.WriteScreenshot(name, png)
	if err != nil {
		r.Logger.WarnContext(ctx, "screenshot not written", slog.String("run_id", r.ID), slog.String("name", name), slog.Any("error", err))
		return ""
	}
	r.Emit(step, evidence.ScreenshotKept{Screenshot: rel, Reason: reason})
	return rel
}

// StepScreenshot takes d's masked screenshot of the screen after the n-th
// step result of the run (1-based), step its id, when the run's evidence
// level keeps it (stepReason of reason, the engine's reason: output,
// after_elevated, or "" for none), and writes it to the run's evidence as
// screenshots/step-NNN.png with a screenshot_kept event saying why,
// returning the bundle-relative path its step_finished event records. A
// screen not kept is still captured when an earlier elevated step waits
// for its screen after (pictureAwaiting). A step that left the screen as
// the last screenshot showed it (nothing dispatched, no change seen: an
// extraction, an assertion) costs no capture: under full it gets that
// screenshot's path, under the other levels a copy under its own name. It
// returns "" when the level keeps nothing for the step, the run writes no
// evidence, the surface has no pixels, or the screenshot failed; a failure
// is logged, never fatal: a run is not stopped for its pictures. Not safe
// for concurrent use.
func (r *Run) StepScreenshot(ctx context.Context, d *Dispatcher, n int, step, reason string) string {
	r.steps = n
	if r.Evidence == nil || d == nil || ctx.Err() != nil {
		return ""
	}
	reason = r.stepReason(reason)
	if reason == "" && !r.awaitingBefore(n) {
		return ""
	}
	if r.shot.unchangedSince(ctx, d) {
		r.pictureAwaiting(ctx, n)
		if reason == "" {
			return ""
		}
		if r.level == domain.EvidenceFull && r.shot.path != "" {
			return r.shot.path
		}
		rel := r.keep(ctx, step, evidence.ScreenshotName(n), r.shot.png, reason)
		if rel != "" {
			r.shot.path = rel
		}
		if reason == evidence.ReasonFailure {
			r.failShot = rel
		}
		return rel
	}
	png, seq, err := d.maskedShot(ctx)
	if err != nil {
		if !errors.Is(err, surface.ErrNoFrame) {
			r.Logger.WarnContext(ctx, "step screenshot skipped", slog.String("run_id", r.ID), slog.Int("step", n), slog.Any("error", err))
		}
		return ""
	}
	rel := ""
	if reason != "" {
		rel = r.keep(ctx, step, evidence.ScreenshotName(n), png, reason)
	}
	if reason == evidence.ReasonFailure {
		r.failShot = rel
	}
	r.shot = lastShot{d: d, dispatches: d.Dispatches(), seq: seq, path: rel, png: png}
	r.pictureAwaiting(ctx, n)
	return rel
}

// EndScreenshot pictures the screen a run ended on, with status, as
// screenshots/final.png: reason final for SUCCESS and a business outcome,
// halt for NEEDS_HUMAN, failure otherwise. Under decisive it is always
// kept; under full and none only when the run did not end SUCCESS (full
// already holds the last step's screen). A run that did not succeed and
// whose failed step's screen (reason failure) is still the screen shown
// keeps no second picture of it: that step's path is returned. An
// unchanged screen since the last screenshot is copied, not captured
// again. Logged, never fatal.
func (r *Run) EndScreenshot(ctx context.Context, d *Dispatcher, status domain.RunStatus) string {
	if r.Evidence == nil || d == nil || ctx.Err() != nil {
		return ""
	}
	if r.level != domain.EvidenceDecisive && status == domain.StatusSuccess {
		return ""
	}
	reason := evidence.ReasonFailure
	switch status {
	case domain.StatusSuccess, domain.StatusBusinessOutcome:
		reason = evidence.ReasonFinal
	case domain.StatusNeedsHuman:
		reason = evidence.ReasonHalt
	}
	unchanged := r.shot.unchangedSince(ctx, d)
	if status != domain.StatusSuccess && unchanged && r.failShot != "" && r.shot.path == r.failShot {
		return r.failShot
	}
	png := r.shot.png
	if !unchanged {
		var err error
		if png, _, err = d.maskedShot(ctx); err != nil {
			if !errors.Is(err, surface.ErrNoFrame) {
				r.Logger.WarnContext(ctx, "final screenshot skipped", slog.String("run_id", r.ID), slog.Any("error", err))
			}
			return ""
		}
	}
	return r.keep(ctx, "", evidence.FinalScreenshotName, png, reason)
}

// ParkScreenshot pictures, at every evidence level, the screen a run is
// about to hand to a person (step the step it parks at) as
// screenshots/park-NNN.png, NNN counting the run's parks. Logged, never
// fatal.
func (r *Run) ParkScreenshot(ctx context.Context, d *Dispatcher, step string) string {
	if r.Evidence == nil || d == nil || ctx.Err() != nil {
		return ""
	}
	png := r.shot.png
	if !r.shot.unchangedSince(ctx, d) {
		var err error
		if png, _, err = d.maskedShot(ctx); err != nil {
			if !errors.Is(err, surface.ErrNoFrame) {
				r.Logger.WarnContext(ctx, "park screenshot skipped", slog.String("run_id", r.ID), slog.Any("error", err))
			}
			return ""
		}
	}
	r.parks++
	return r.keep(ctx, step, evidence.ParkScreenshotName(r.parks), png, evidence.ReasonPark)
}

// pictureAwaiting settles the elevated and irreversible steps awaiting their picture
// after, now that the screen after step result n is pictured (r.shot): n's
// own is that picture (its step_finished names it); an earlier one, whose
// screen could not be painted when it finished (a JavaScript dialog it
// opened), gets this first painted screen after it as
// step-NNN-after.png, named by a screenshot_after event (and a
// screenshot_kept of reason after_elevated).
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
		r.Emit(a.step, evidence.ScreenshotKept{Screenshot: rel, Reason: evidence.ReasonAfterElevated})
		r.Emit(a.step, evidence.ScreenshotAfter{Screenshot: rel, Why: fmt.Sprintf(
			"the screen after step %s (step %d) could not be pictured when it finished (a JavaScript dialog cannot be painted); "+
				"this is the first screen painted after it, the screen after step %d", a.step, a.n, n)})
	}
	r.awaiting = r.awaiting[:0]
}

// BeforeScreenshot takes d's masked screenshot of the screen an elevated
// or irreversible action was just authorized on, before it is sent, at
// every evidence level, and writes it as screenshots/step-NNN-before.png
// (a screenshot_kept event of reason before_elevated), NNN the number of the step
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
	return r.keep(ctx, step, evidence.BeforeScreenshotName(n), png, evidence.ReasonBeforeElevated)
}
