// Package bench holds cua's benchmarks: Go benchmarks of the replay engine
// against the real browser and the mock app, of target resolution, and the
// scripts that run them and print the numbers (see README "Performance").
// Speed goals live here, never in timed unit tests.
package bench
