//go:build !race

package targeting

const raceEnabled = false
