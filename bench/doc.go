// Package bench holds cua's benchmarks. Speed goals live here, never in
// timed unit tests.
//
//   - engine_bench_test.go: micro-benchmarks of the engine (target
//     resolution in 1k/10k/100k-node snapshots, snapshot normalisation, the
//     redactor on 1 MB, the content hash of the reference capability,
//     event-chain append) and progresskey_bench_test.go (StableProgressKey
//     on huge, cyclic and shared-child states). All are valid with
//     -benchtime=1x.
//   - capture_bench_test.go: the masked screenshot's parts (Chromium's
//     capture, the Go decode/mask/encode) and the ways of taking one that
//     were tried (docs/explanation/capture.md).
//   - replay_bench_test.go: a warm replay of the reference lookup in real
//     Chromium against the mock app.
//   - cmd/benchrun: the driver behind `make bench` (bench/replay.sh). It
//     runs the micro-benchmarks, the reference lookup three ways
//     interleaved (cua's engine in-process, Playwright with getByRole
//     through node/pwworker.mjs, the cheapest chromedp program), the cold
//     start of bin/cua, K concurrent sessions on one browser, and the
//     reference lookup on the mock app's generated UI drift variants
//     (internal/mockapp/drift.go); it prints one table and writes
//     results/latest.json.
//   - node/: the Playwright worker and its package.json and lockfile
//     (playwright-core, driving /usr/bin/chromium).
//
// docs/explanation/performance.md has the latest numbers and how to
// reproduce them; the README carries the headline.
package bench
