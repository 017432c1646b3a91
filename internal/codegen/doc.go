// Package codegen writes a sealed capability as a standalone Playwright Test
// spec in TypeScript: the same steps, targets, checkpoint, business outcomes
// and output checks that replay runs, as a test a QA team can keep without
// cua.
//
// It owns the translation: canonical roles to the ARIA roles Playwright's
// getByRole accepts ([PlaywrightRoles]), target descriptors to locators
// (getByRole with an exact name, getByLabel for a labelled_by anchor, a
// table row for a row_of anchor, getByText for the text role, and an
// iframe's document found by its title for a frame scope), predicates to
// checks, inputs to a data table of cases ([Case]), secrets to
// environment variables read when the test runs, and every string of the
// capability to an escaped literal ([Str]).
//
// It must never emit a CSS or XPath selector (the cached hints of a
// descriptor are dropped), a secret's value or a sensitive input's value, a
// template literal or a comment holding data (the header names guarded
// steps by their ids and capability references, which must have the
// schema's plain form), or a step it cannot express faithfully: such a
// step is refused with a [*RefusedError] naming it, and nothing is written. It does no I/O but [WriteFile] and runs nothing.
//
// It keeps a capability's gates as replay does ([Guard]): the spec fails
// before a gated step unless CUA_RELEASE_GATE names it, and before an
// irreversible step unless CUA_ALLOW_IRREVERSIBLE=1, sending nothing of the
// step and naming what to set. It fails rather than skips: a run that did
// not perform the transfer must never read as green. Elevated steps that
// are not gated run. Every such step is named in the spec's header
// ([Guards], [Guard.Notice]) and reported as an annotation when it runs.
package codegen
