// Package demo owns the verified story that `cua demo` tells: the stages
// (a capability, its inputs, the fault, variant and approval it runs under)
// and what each must produce (status, failure code, outcome, outputs,
// recoveries, dispatches, ledger entries), run against MemberDesk
// (internal/mockapp) in-process through one Chromium, then the approval
// stages (eval replays of the transfer through a SQLite catalog of the
// demo's own, an approval earned from them, unattended runs inside and
// outside its bound), followed by a recorded discovery that is compiled,
// sealed and replayed. With [Config.Bin] the fleet stages follow: a queue
// batch worked by two `cua worker` processes, one SIGKILLed mid-run
// (fleet.go), a transfer parked in a `cua worker --park` and finished
// through a `cua console` in another process by a scripted operator in
// Chromium (takeover.go), and a desktop replay over AT-SPI (desktop.go), both run as
// separate processes of that binary.
//
// [Run] starts the app and the browser, runs every stage, compares each
// result with its expectation and returns a [Report]; the command only
// chooses flags and prints. The mock app is driven through
// [mockapp.Client], the same client the end-to-end tests use.
//
// The package must never print, choose an exit code or parse flags (that
// is internal/cli's job), never import internal/cli, never compile or seal
// a capability itself (the discovery stages ask a [Discoverer], the
// pipeline), never judge an approval (the catalog does), never open a
// store other than its own under the data dir (the approval stages'
// catalog, the queue stage's data directory), and never redact:
// every record it returns was redacted by the engine that made it. It
// talks to loopback only: the app it starts on 127.0.0.1.
package demo
