package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// microResult is one Go benchmark of bench/engine_bench_test.go.
type microResult struct {
	Name        string             `json:"name"`
	Iterations  int64              `json:"iterations"`
	MSPerOp     float64            `json:"ms_per_op"`
	BytesPerOp  int64              `json:"bytes_per_op,omitempty"`
	AllocsPerOp int64              `json:"allocs_per_op,omitempty"`
	Metrics     map[string]float64 `json:"metrics,omitempty"`
}

// microPattern selects the engine micro-benchmarks (not the browser one).
const microPattern = `^Benchmark(Resolve|Normalize|StableProgressKey|Redact|ContentHash|EventAppend)`

// runMicro runs the engine micro-benchmarks with go test and parses their
// lines.
func runMicro(ctx context.Context, c *config, res *results) error {
	args := []string{"test", "-run", "^$", "-bench", microPattern, "-benchmem", "-benchtime", c.microTime, "-count", "1", "./bench"}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = c.root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	res.Micro = parseBench(string(out))
	if len(res.Micro) == 0 {
		return fmt.Errorf("no benchmark lines in:\n%s", out)
	}
	return nil
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// parseBench reads `go test -bench` output lines.
func parseBench(out string) []microResult {
	var rs []microResult
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		r := microResult{Name: strings.TrimPrefix(m[1], "Benchmark"), Metrics: map[string]float64{}}
		r.Iterations, _ = strconv.ParseInt(m[2], 10, 64)
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch unit := f[i+1]; unit {
			case "ns/op":
				r.MSPerOp = round(v/1e6, 4)
			case "B/op":
				r.BytesPerOp = int64(v)
			case "allocs/op":
				r.AllocsPerOp = int64(v)
			default:
				r.Metrics[unit] = v
			}
		}
		if len(r.Metrics) == 0 {
			r.Metrics = nil
		}
		rs = append(rs, r)
	}
	return rs
}
