// Package observer owns cua's read-only run library: an HTTP server over
// the finished (and running) run bundles under <data-dir>/runs/, with an
// index of runs (status, capability, time, outcome, effects, drift, share
// readiness; filters by query), one page per run (the timeline of its
// events with their screenshots, outputs as stored, lease changes, the
// receipt and the verify report), history.json for polling, and each served
// run's screenshots.
//
// It owns the fail-closed exposure matrix (ValidateExposure): loopback by
// default; exposure beyond the machine only through a public origin that is
// either secured by the operator's edge or limited to runs that pass
// evidence.VerifyDeployment (share_ready, and signed by the deployment key
// when one is configured), re-verified whenever a file of the run
// changes. Every refused combination has its own code and is refused before
// anything binds.
//
// The observer must never write, move or delete anything under the data
// directory, never serve a file from outside a served run's bundle (no path
// traversal, no symlinks, no name outside screenshots/step-NNN.png), never
// answer a method other than GET or HEAD, never answer a Host that is not
// its bound or public origin, never run or embed script, and never tell a
// missing run from one it does not serve: both get the same 404 bytes.
// Every text it renders passes through a redactor holding the registered
// canaries, on top of the redaction the bundle was written with.
package observer
