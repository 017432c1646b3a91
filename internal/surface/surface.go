// Package surface declares the Surface port: the one interface through which
// cua observes and acts on an application. Adapters live in subpackages
// (browser, sim, later state and desktop) and are held to one conformance
// suite, surfacetest.
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
	// It returns an error wrapping ErrCrashed when the application or its
	// browser is gone.
	Observe(ctx context.Context) (*domain.UiSnapshot, error)

	// Dispatch performs one authorized action on the node it names. It
	// refuses an invalid (zero) AuthorizedAction with ErrUnauthorized, a node
	// that no longer exists with ErrStale, and returns ErrCrashed when the
	// application is gone. A reload of a document whose snapshot is
	// PostBacked is refused with ErrResubmit, sending nothing. An action
	// that began but did not take effect as asked (a value that did not
	// land, a covered target, focus taken by another element, a node that
	// left the page mid-action) returns ErrNotLanded; its message never
	// quotes a field's content.
	Dispatch(ctx context.Context, a policy.AuthorizedAction) (Result, error)

	// WaitChange blocks until the surface has seen a change (navigation,
	// load, DOM or accessibility change, dialog) after the observation with
	// sequence number since, or until ctx is done (returning ctx.Err()).
	// It returns nil immediately when a change is already pending.
	WaitChange(ctx context.Context, since uint64) error

	// Screenshot returns a PNG of the current view, or ErrNoFrame for a
	// surface without pixels. Raw screenshots are runtime inputs, never
	// evidence, unless redacted first (invariant 11).
	Screenshot(ctx context.Context) ([]byte, error)

	// Close ends the session and releases its resources. It is safe to call
	// more than once.
	Close() error
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
