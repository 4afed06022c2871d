#!/usr/bin/env bash
# The open model's arrival schedule at fixed rates: first-launch and relaunch+event journeys at
# 500, 1,000, 2,500, 5,000 and 10,000 journeys/s against `optolink-soak serve` in its own process,
# SECONDS_PER_RUN seconds each (every run bounded: its seconds plus 120 s, then killed). Writes start
# lag p50 / p99 / p99.9, late-start share, dropped arrivals, requests/s, the driver's CPU seconds per
# journey and its peak RSS per device to Benchmarks/results/arrivals.json (Benchmarks/peers/arrivals.py).
#
# Usage: bash Benchmarks/arrivals.sh
#   SECONDS_PER_RUN=10  RATES=500,1000,2500,5000,10000  KINDS=first-launch,event
#   SOAK_BIN=path       measure a binary you built instead of building this tree in release
#   RESULT_NAME=arrivals the result file's name (a reduced run can write elsewhere)
# Run it on a quiet machine: every other process on the cores shows up as late starts.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-10}"
RATES="${RATES:-500,1000,2500,5000,10000}"
KINDS="${KINDS:-first-launch,event}"
# 100,000 devices at 10,000 journeys/s hold no descriptor each, but the client pool and serve do.
ulimit -n 65536 2>/dev/null || true
if [[ -z "${SOAK_BIN:-}" ]]; then
    swift build -c release --product optolink-soak
    SOAK_BIN="$PWD/.build/release/optolink-soak"
fi
exec python3 Benchmarks/peers/arrivals.py "$SOAK_BIN" "$SECONDS_PER_RUN" "$RATES" "$KINDS"
