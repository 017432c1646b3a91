#!/usr/bin/env bash
# Runs every cua benchmark through bench/cmd/benchrun and prints one table:
# engine micro-benchmarks, the warm replay of the reference lookup against
# Playwright and the bare-CDP floor (interleaved; cua also at
# --evidence-level none), the cold start of bin/cua, `cua replay --engine`
# to its first dispatch on a warm `cua serve`, K concurrent sessions on one
# browser, the UI drift suite, `cua batch` throughput at 1 and 4 sessions
# side by side with the floor way (the bare-CDP lookup on as many sessions;
# lookups/min and Chromium CPU per lookup; -batch-sessions 1,2,4,8
# -batch-modes cold,warm for the whole sweep, about 15 minutes more), a fleet of two
# `cua worker` processes on one private PostgreSQL (Debian's postgresql
# binaries, as internal/store/pgtest starts them), and "stay on the page"
# (Playwright looping on the search page vs cua on one warm session), and
# the fault model (each MemberDesk write fault and a control, 10 transfers
# each with and without effect contracts, judged from the ledger). The
# goals table judges issue 27's goals as ratios measured in the same run.
# Writes bench/results/latest.json.
#
# Usage: bench/replay.sh [benchrun flags]
#   bench/replay.sh                      # everything, about 5 minutes
#   bench/replay.sh -n 10 -only speed    # a quick side-by-side
#   bench/replay.sh -skip scale,drift    # see: go run ./bench/cmd/benchrun -h
#   bench/replay.sh -only batch,fleet,stay -batch-rows 100
#   bench/replay.sh -only faults -merge   # into latest.json, other phases kept
set -euo pipefail
cd "$(dirname "$0")/.."

command -v node >/dev/null || { echo "bench: node (20 or later) is required for the Playwright side" >&2; exit 1; }
# playwright-core from bench/node's lockfile; it drives /usr/bin/chromium and
# never downloads a browser.
if [ ! -f bench/node/node_modules/.package-lock.json ] || [ bench/node/package-lock.json -nt bench/node/node_modules/.package-lock.json ]; then
	(cd bench/node && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
go build -o bin/cua ./cmd/cua
go build -o bin/benchrun ./bench/cmd/benchrun
exec bin/benchrun "$@"
