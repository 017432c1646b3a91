// Package observecmd is `cua observe`: serving the run library (or one run)
// read-only over HTTP with internal/observer, behind its fail-closed
// exposure matrix.
//
// It holds flags, validation and printing only: the exposure matrix, the
// reading of bundles and every HTTP answer belong to internal/observer. It
// must never bind before the exposure is accepted, and never write under
// the data directory.
package observecmd
