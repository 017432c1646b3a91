// Package jobs runs capabilities as jobs on River (riverqueue): one job is
// one replay of a catalog capability (its reference, the content hash it
// was pinned to, its inputs, an idempotency key and a priority). The queue
// lives in a SQLite file beside the embedded store by default (riversqlite)
// or in the store's PostgreSQL database for a fleet (riverpgxv5); its
// tables are created by rivermigrate.
//
// It owns the job arguments ([RunArgs]), the worker that turns a job into
// one replay through an injected [Runner], the rule that decides whether a
// failed attempt may be retried, and the queue's client API (submit, get,
// list, cancel, wait) that `cua serve`, `cua worker`, `cua submit` and
// `cua batch` share.
//
// The retry rule (DESIGN invariant 13): River retries only an attempt that
// sent no effect. Every attempt's run is indexed in the catalog under a
// run id derived from the job id and the attempt number before its surface
// opens; an attempt that finds an earlier attempt of its job that sent an
// effect, or that died mid-run on a capability with an elevated or
// irreversible step (whether that step was dispatched is unknown), enqueues
// an intervention for a human and cancels the job: it is never run again.
//
// It must never open a surface, authorize or dispatch an action, or decide
// a run's outcome itself: runs go through the Runner (pipeline.Replay in
// the composition root), and it imports no surface adapter or model.
package jobs
