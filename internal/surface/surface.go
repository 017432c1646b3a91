// Package surface declares the Surface port: the one interface through which
// cua observes and acts on an application, its sentinel errors, and the
// named optional abilities an adapter may add ([ProgressKeyer]). Adapters
// live in subpackages (browser, sim, state, later desktop) and are held to
// one conformance suite, surfacetest.
//
// The port speaks canonical roles only (the vocabulary in domain/roles.go):
// each adapter maps its platform's role names inside itself. This package
// must never hold adapter code, platform role names, or engine logic.
//
// Only internal/runtime calls Dispatch (DESIGN invariant 2, checked by
// internal/archtest), and Dispatch takes a policy.AuthorizedAction, which
// only internal/policy can make.
package surface

import (
	"context"
	"errors"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/policy"
)

// Surface is one live session on an application (for the browser: one
// isolated browser context with one page).
//
// Methods are safe for use by one goroutine at a time; a run owns its
// surface. Every blocking method honours ctx's deadline.
type Surface interface {
	// Observe returns the current snapshot. Seq increases with each call.
	// Every node's Role is a canonical role (domain.IsRole): the adapter
	// has mapped its platform's role names and left out platform layout
	// noise. It returns an error wrapping ErrCrashed when the application
	// or its browser is gone.
	Observe(ctx context.Context) (*domain.UiSnapshot, error)

	// Dispatch performs one authorized action on the node it names. It
	// refuses an invalid (zero) AuthorizedAction with ErrUnauthorized, a node
	// that no longer exists with ErrStale, and returns ErrCrashed when the
	// application is gone. A reload of a document whose snapshot is
	// PostBacked is refused with ErrResubmit, sending nothing. An action
	// that began but did not take effect as asked (a value that did not
	// land, a covered target, focus taken by another element, a node that
	// left the page mid-action) returns ErrNotLanded; its message never
	// quotes a field's content. An adapter that sees what an action
	// reaches beyond its node (the control under a click point, the one a
	// label forwards to, the button Enter submits with) hands it to
	// a.Admits just before it sends the action and, refused, sends nothing
	// and returns policy's denial wrapping ErrUnauthorized.
	Dispatch(ctx context.Context, a policy.AuthorizedAction) (Result, error)

	// WaitChange blocks until the surface has seen a change (navigation,
	// load, DOM or accessibility change, dialog) after the observation with
	// sequence number since, or until ctx is done (returning ctx.Err()).
	// It returns nil immediately when a change is already pending.
	WaitChange(ctx context.Context, since uint64) error

	// ChangedSince reports, without waiting, whether the surface has seen a
	// change (as WaitChange counts them) after the observation with
	// sequence number since: true exactly when WaitChange(since) would
	// return nil at once. A since the surface no longer remembers counts as
	// changed. It returns an error wrapping ErrCrashed when the
	// application is gone. The runtime uses it to reuse its last snapshot.
	ChangedSince(ctx context.Context, since uint64) (bool, error)

	Screenshotter

	// Close ends the session and releases its resources. It is safe to call
	// more than once.
	Close() error
}

// Screenshotter is the screenshot ability. Every Surface has it, because
// the engine's callers (discovery's model prompts, the console, evidence)
// ask any surface for pixels; a surface without pixels answers ErrNoFrame.
// A consumer that needs nothing else declares its dependency on this.
type Screenshotter interface {
	// Screenshot returns a PNG of the current view, or ErrNoFrame for a
	// surface without pixels. Raw screenshots are runtime inputs, never
	// evidence, unless redacted first (invariant 11).
	Screenshot(ctx context.Context) ([]byte, error)
}

// MaskedScreenshotter is the optional ability to take a screenshot that is
// evidence: every box (page coordinates, as a snapshot's node Bounds,
// frame offsets included) is painted opaque black before the image is
// encoded, so the unmasked pixels never leave the adapter. Callers
// type-assert a Surface to it; a surface without it writes no screenshots
// to evidence. It returns surface.ErrNoFrame for a surface without pixels.
type MaskedScreenshotter interface {
	MaskedScreenshot(ctx context.Context, boxes []domain.Rect) ([]byte, error)
}

// ProgressKeyer is the optional ability of a state-driven surface to name
// its application's own progress: ProgressKey returns a bounded,
// order-independent key of the app state (perception.StableProgressKey)
// that changes exactly when the application made progress. Callers
// type-assert a Surface to it; without it they judge progress from the
// screen. It must not block and is safe to call between the surface's
// other methods.
type ProgressKeyer interface {
	ProgressKey() string
}

// Result reports what a dispatch observably did.
type Result struct {
	// Navigated is true when the action started a navigation in any frame.
	Navigated bool
	// URL is the top document's URL after the action.
	URL string
}

// Sentinel errors adapters return (wrapped).
var (
	ErrUnauthorized = errors.New("action not authorized by policy")
	ErrStale        = errors.New("target node no longer exists")
	ErrCrashed      = errors.New("surface crashed or disconnected")
	ErrNoFrame      = errors.New("surface has no screenshot")
	ErrUnsupported  = errors.New("action not supported by this surface")
	// ErrResubmit refuses a reload of a document that came from a POST:
	// reloading it would send the form again.
	ErrResubmit = errors.New("reload would re-send a submitted form")
	// ErrNotLanded reports an action that was dispatched but did not take
	// effect as asked (a typed value that did not land, a click another
	// element intercepted, a node detached mid-action). The screen must be
	// classified before the run decides what it means.
	ErrNotLanded = errors.New("action did not take effect")
)

// FailureCode maps an adapter error to the run's failure code.
func FailureCode(err error) domain.FailureCode {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrCrashed):
		return domain.CodeSurfaceCrashed
	case errors.Is(err, ErrUnauthorized):
		return domain.CodePolicyDenied
	case errors.Is(err, ErrStale):
		return domain.CodeTargetNotFound
	case errors.Is(err, ErrResubmit):
		return domain.CodePolicyDenied
	case errors.Is(err, context.DeadlineExceeded):
		return domain.CodeTimeout
	case errors.Is(err, context.Canceled):
		return domain.CodeCanceled
	}
	return domain.CodeSurfaceError
}
