//go:build race

package targeting

// raceEnabled is set under -race, where sync.Pool drops items at random and
// allocation counts mean nothing.
const raceEnabled = true
