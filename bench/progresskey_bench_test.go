package bench

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/perception"
)

// progressInputs are the hostile states of DESIGN invariant 11.
func progressInputs() map[string]any {
	// huge: 20,000 keys, each a record with a 200-element array and a 4 KB
	// string, plus one 8 MB string.
	huge := make(map[string]any, 20001)
	row := make([]any, 200)
	for i := range row {
		row[i] = i
	}
	long := strings.Repeat("x", 4096)
	for i := range 20000 {
		huge["k"+strconv.Itoa(i)] = map[string]any{"row": row, "text": long, "n": i}
	}
	huge["blob"] = strings.Repeat("y", 8<<20)

	// cyclic: a map and a slice that contain themselves and each other.
	cyc := map[string]any{"route": "/members", "turn": 3}
	list := []any{1, 2, nil}
	list[2] = list
	cyc["self"] = cyc
	cyc["list"] = list
	list[0] = cyc

	// shared: six levels, each a map of 64 keys that all point to the one
	// child of the level below (64^6 paths if walked naively).
	var shared any = map[string]any{"leaf": true}
	for range 6 {
		m := make(map[string]any, 64)
		for k := range 64 {
			m["c"+strconv.Itoa(k)] = shared
		}
		shared = m
	}
	return map[string]any{"huge": huge, "cyclic": cyc, "shared": shared}
}

// BenchmarkStableProgressKey keys huge, cyclic and shared-child states
// (goal: the shared one under 10 ms). Every key must be bounded.
func BenchmarkStableProgressKey(b *testing.B) {
	inputs := progressInputs()
	for _, name := range []string{"huge", "cyclic", "shared"} {
		v := inputs[name]
		b.Run(name, func(b *testing.B) {
			if key := perception.StableProgressKey(v); key == "" || len(key) > 1<<20 {
				b.Fatalf("key of %d bytes", len(key))
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = perception.StableProgressKey(v)
			}
		})
	}
}
