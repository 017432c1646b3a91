// Package batchcmd is `cua batch`: one queued run per row of a CSV or
// JSON Lines file (internal/jobs), a live progress bar on a terminal and
// plain lines otherwise, and a results file that makes a re-run resume.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package batchcmd
