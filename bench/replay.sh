#!/usr/bin/env bash
# Times a warm replay of the reference lookup (browser running, session
# signed on) and target resolution in a 10,000-node snapshot, and prints the
# medians. Usage: bench/replay.sh [LOOKUPS]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-30}"
out=$(go test -run '^$' -bench 'ReplayLookup|Resolve10k' -benchtime "${n}x" -count 1 ./bench)
echo "$out" | grep -E '^Benchmark' >&2
median=$(echo "$out" | awk '/^BenchmarkReplayLookup/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ms/median") print $i }')
p95=$(echo "$out" | awk '/^BenchmarkReplayLookup/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ms/p95") print $i }')
resolve=$(echo "$out" | awk '/^BenchmarkResolve10k/ { print $3 / 1e6 }')
printf 'warm replay of the reference lookup: median %s ms, p95 %s ms over %s lookups (goal: < 150 ms)\n' "$median" "$p95" "$n"
printf 'resolution of one target in a 10,000-node snapshot: %s ms (goal: < 1 ms)\n' "$resolve"
