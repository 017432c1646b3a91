// Package recordcmd is `cua record`: flags, validation and printing around
// internal/record, which parks the application's session in a console,
// serves the recording page, and compiles, seals and replays what a person
// demonstrated there.
//
// It holds flags, validation and printing only, and must never resolve
// targets, read snapshots or dispatch actions itself.
package recordcmd
